"""A small deterministic byte-level BPE vocabulary for the tiny test models."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from dataclasses import dataclass

# Text the merges are learned from: chat markup, English, and the kinds of code the tests feed.
TRAINING_TEXT = """
You are a software-engineering agent working in a checked-out repository.
Use the available tools to inspect files, make focused edits, and run commands.
Solve the task, validate when practical, then give a brief final answer.
The function returns the value of the parameter when the file exists and the test passes.
def main(argv: list[str]) -> int:
    for index, value in enumerate(values):
        if value is None:
            return None
        result = self.process(value)
    return 0
class Settings:
    def __init__(self, path: str, name: str = "default") -> None:
        self.path = path
        self.name = name
import os
from pathlib import Path
function render(items) { return items.map((item) => item.name).join(", "); }
const value = await fetch(url); let count = 0; export default value;
func main() { fmt.Println("hello, world"); if err != nil { return err } }
package main
interface Options { name: string; count: number; enabled: boolean }
<tool_call>
<function=Read>
<parameter=file_path>
src/main.py
</parameter>
</function>
</tool_call>
Exit code: 0
STDOUT:
STDERR:
Wrote file (120 bytes). Edited file (1 replacement).
"""

# Pre-tokenizer split close enough to the Qwen2 pattern for learning merges inside words.
_WORD_RE = re.compile(r"""'(?:[sdmt]|ll|ve|re)| ?[A-Za-z]+| ?[0-9]| ?[^\sA-Za-z0-9]+|\s+""")

CONTROL_TOKENS: tuple[str, ...] = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
"""Special tokens that are control tokens (never rendered as text unless asked)."""

TEXT_SPECIAL_TOKENS: tuple[str, ...] = (
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
)
"""Special tokens that are always matched whole and rendered as text (user-defined type)."""

TOKEN_TYPE_NORMAL = 1
TOKEN_TYPE_CONTROL = 3
TOKEN_TYPE_USER_DEFINED = 4
TOKEN_TYPE_UNUSED = 5


@dataclass(frozen=True)
class Vocabulary:
    """Tokens (GPT-2 byte-to-unicode form), their types and the BPE merges, in id order."""

    tokens: list[str]
    token_types: list[int]
    merges: list[str]

    def token_id(self, text: str) -> int:
        """Id of a token given by its stored text."""
        return self.tokens.index(text)


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map from byte values to printable unicode characters."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    mapping: dict[int, str] = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


def _learn_merges(text: str, n_merges: int) -> list[tuple[str, str]]:
    """Learn up to n_merges BPE merges over the pre-tokenized words of text (deterministic)."""
    byte_map = bytes_to_unicode()
    words: Counter[tuple[str, ...]] = Counter()
    for piece in _WORD_RE.findall(text):
        words[tuple(byte_map[b] for b in piece.encode("utf-8"))] += 1
    merges: list[tuple[str, str]] = []
    for _ in range(n_merges):
        pairs: Counter[tuple[str, str]] = Counter()
        for word, count in words.items():
            for left, right in itertools.pairwise(word):
                pairs[(left, right)] += count
        if not pairs:
            break
        # Highest count first, ties broken by the pair's text so the result is stable.
        best = min(pairs.items(), key=lambda item: (-item[1], item[0]))[0]
        merges.append(best)
        merged: Counter[tuple[str, ...]] = Counter()
        for word, count in words.items():
            out: list[str] = []
            i = 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] += count
        words = merged
    return merges


def build_vocabulary(n_merges: int = 320) -> Vocabulary:
    """The byte alphabet, learned merges, then the special tokens (control first)."""
    byte_map = bytes_to_unicode()
    tokens = [byte_map[b] for b in range(256)]
    types = [TOKEN_TYPE_NORMAL] * 256
    seen = set(tokens)
    merges = _learn_merges(TRAINING_TEXT, n_merges)
    for left, right in merges:
        joined = left + right
        if joined not in seen:
            seen.add(joined)
            tokens.append(joined)
            types.append(TOKEN_TYPE_NORMAL)
    for text in CONTROL_TOKENS:
        tokens.append(text)
        types.append(TOKEN_TYPE_CONTROL)
    for text in TEXT_SPECIAL_TOKENS:
        tokens.append(text)
        types.append(TOKEN_TYPE_USER_DEFINED)
    return Vocabulary(
        tokens=tokens,
        token_types=types,
        merges=[f"{left} {right}" for left, right in merges],
    )
