"""The versioned held-out corpus of the quant check: code files and rendered Leaf transcripts."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from frogdesk.quantcheck.errors import CorpusError

CODE = "code"
TRANSCRIPT = "transcript"


@dataclass(frozen=True)
class CorpusDocument:
    """One text the models are scored on: a source file or a rendered transcript."""

    name: str
    kind: str
    language: str
    text: str


@dataclass(frozen=True)
class FidelityCase:
    """A transcript prefix that ends where the model must act, and the call the transcript made."""

    name: str
    prefix: str
    expected_tool: str


@dataclass(frozen=True)
class Corpus:
    """The corpus: its version, a digest of its exact bytes, documents and tool-call cases."""

    version: str
    digest: str
    documents: tuple[CorpusDocument, ...]
    cases: tuple[FidelityCase, ...]
    tools: tuple[dict[str, Any], ...] = ()
    """The tool schemas the transcripts offer (what a continuation's calls are read against)."""


def default_corpus_dir() -> Path:
    """The corpus shipped inside the package."""
    return Path(str(resources.files("frogdesk").joinpath("data", "check_corpus")))


def _render_value(value: Any) -> str:
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def render_call(name: str, arguments: dict[str, Any]) -> str:
    """A tool call in FrogNano's XML form."""
    params = "".join(
        f"<parameter={key}>\n{_render_value(value)}\n</parameter>\n"
        for key, value in arguments.items()
    )
    return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"


def _system_turn(setup: dict[str, Any]) -> str:
    tools = "\n".join(json.dumps(tool, ensure_ascii=False) for tool in setup["tools"])
    return (
        "<|im_start|>system\n# Tools\n\nYou may call one or more functions to assist with the"
        f" user query.\n\nYou are provided with function signatures within <tools></tools>:\n"
        f"<tools>\n{tools}\n</tools>\n\nTo call a function, reply in this form, with nothing after"
        " the call:\n<tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n"
        f"</function>\n</tool_call>\n\n{setup['system']}<|im_end|>\n"
    )


def _assistant_open(reasoning: str) -> str:
    return f"<|im_start|>assistant\n<think>\n{reasoning.strip()}\n</think>\n\n"


def render_transcript(
    name: str, setup: dict[str, Any], transcript: dict[str, Any]
) -> tuple[str, list[FidelityCase]]:
    """The whole transcript as the model sees it, and one case per step that calls a tool."""
    text = _system_turn(setup) + f"<|im_start|>user\n{transcript['task']}<|im_end|>\n"
    cases: list[FidelityCase] = []
    for index, step in enumerate(transcript["steps"]):
        opening = _assistant_open(step.get("reasoning", ""))
        calls = step["calls"]
        cases.append(FidelityCase(f"{name}#{index}", text + opening, calls[0]["name"]))
        content = step.get("content", "").strip()
        body = "\n".join(render_call(c["name"], c["arguments"]) for c in calls)
        text += opening + (content + "\n\n" if content else "") + body + "<|im_end|>\n"
        results = "".join(
            f"\n<tool_response>\n{obs}\n</tool_response>" for obs in step["observations"]
        )
        text += f"<|im_start|>user{results}<|im_end|>\n"
    final = transcript["final"]
    text += _assistant_open(final.get("reasoning", "")) + final["content"].strip() + "<|im_end|>\n"
    return text, cases


def _read(root: Path, relative: str) -> bytes:
    path = root / relative
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CorpusError(f"corpus file missing or unreadable: {path}") from exc


def load_corpus(root: Path | None = None) -> Corpus:
    """Load the corpus from root (default: the shipped one); its digest covers every byte read."""
    root = root if root is not None else default_corpus_dir()
    digest = hashlib.sha256()
    raw_manifest = _read(root, "corpus.json")
    digest.update(raw_manifest)
    try:
        manifest = json.loads(raw_manifest)
        version = str(manifest["version"])
        documents: list[CorpusDocument] = []
        for entry in manifest["code"]:
            data = _read(root, entry["file"])
            digest.update(entry["file"].encode() + b"\0" + data)
            documents.append(CorpusDocument(entry["file"], CODE, entry["language"], data.decode()))
        raw_setup = _read(root, manifest["setup"])
        digest.update(raw_setup)
        setup = json.loads(raw_setup)
        cases: list[FidelityCase] = []
        for relative in manifest["transcripts"]:
            data = _read(root, relative)
            digest.update(relative.encode() + b"\0" + data)
            text, found = render_transcript(relative, setup, json.loads(data))
            documents.append(CorpusDocument(relative, TRANSCRIPT, "chat", text))
            cases.extend(found)
    except (KeyError, TypeError, ValueError) as exc:
        raise CorpusError(f"malformed corpus in {root}: {exc!r}") from exc
    tools = tuple(t for t in setup.get("tools", ()) if isinstance(t, dict))
    return Corpus(version, digest.hexdigest()[:16], tuple(documents), tuple(cases), tools)
