"""The `script` backend: replays recorded raw model replies from a JSONL file through the parser.

Each line is a JSON object. `{"text": RAW}` is one assistant reply exactly as the model
emits it after the generation prompt (reasoning, `</think>`, content, XML tool calls);
`{"error": MESSAGE}` makes that turn fail as a server error would. Blank lines are skipped.
A first line `{"dialect": "hermes_json"}` replays the script in that tool-call dialect
(default `qwen3_coder_xml`, FrogNano's), as a model whose template teaches it would speak;
`"thinking": false` in it says the replies start outside reasoning (a template, like
Qwen2.5's, whose generation prompt opens no `<think>`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from frogdesk.engine.chat import (
    BackendInfo,
    Decoded,
    EngineEvent,
    Finished,
    FinishReason,
    GenerationSettings,
    Message,
    ToolCallError,
    ToolCallEvent,
    ToolSchema,
    Usage,
)
from frogdesk.engine.errors import ScriptError
from frogdesk.engine.estimate import CHARS_PER_TOKEN, estimate_prompt_tokens, estimate_tokens
from frogdesk.engine.toolcall.dialect import XML, ToolCallDialect, ToolCallParser, dialect_named


@dataclass(frozen=True)
class ScriptedReply:
    """One line of a script: a raw reply, or an error to report instead of a reply."""

    line: int
    text: str = ""
    error: str = ""


def read_script(path: Path) -> list[ScriptedReply]:
    """Parse a script file's replies; raises `ScriptError` naming the line that is wrong."""
    return read_script_file(path)[1]


@dataclass(frozen=True)
class ScriptHeader:
    """A script's first line: the dialect it speaks, and whether its replies open in reasoning."""

    dialect: ToolCallDialect = XML
    thinking: bool | None = None
    """None: as the run's enable_thinking setting says."""


def read_script_file(path: Path) -> tuple[ScriptHeader, list[ScriptedReply]]:
    """Parse a script file: its header and its replies; raises `ScriptError` naming the line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ScriptError(f"{path}: the script file does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScriptError(f"{path}: cannot read the script: {exc}") from None
    replies: list[ScriptedReply] = []
    header: ScriptHeader | None = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            msg = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            raise ScriptError(f"{path} line {number}: not valid JSON ({msg})") from None
        if isinstance(entry, dict) and isinstance(entry.get("dialect"), str):
            if replies or header is not None:
                raise ScriptError(f"{path} line {number}: a dialect line must come first")
            try:
                dialect = dialect_named(entry["dialect"])
            except ValueError as exc:
                raise ScriptError(f"{path} line {number}: {exc}") from None
            thinking = entry.get("thinking")
            header = ScriptHeader(dialect, thinking if isinstance(thinking, bool) else None)
        elif isinstance(entry, dict) and isinstance(entry.get("text"), str):
            replies.append(ScriptedReply(number, text=entry["text"]))
        elif isinstance(entry, dict) and isinstance(entry.get("error"), str):
            replies.append(ScriptedReply(number, error=entry["error"]))
        else:
            raise ScriptError(
                f'{path} line {number}: expected an object with a string "text" '
                f'(or "error"), got {line.strip()[:80]}'
            )
    return header or ScriptHeader(), replies


class ScriptBackend:
    """Replays a script's replies in order, one per `generate` call, streamed in small chunks.

    `strict_calls` False leaves argument checks to the tools (see `QwenXmlToolParser`).
    `dialect` overrides the script's own (its first line, else Qwen3-Coder XML). `skip`
    replies are taken as already used (a resumed session continues after them).
    """

    def __init__(
        self,
        path: Path,
        *,
        skip: int = 0,
        chunk_chars: int = 8,
        strict_calls: bool = False,
        dialect: ToolCallDialect | None = None,
    ) -> None:
        if chunk_chars < 1:
            raise ValueError("chunk_chars must be at least 1")
        if skip < 0:
            raise ValueError("skip counts replies already used: it cannot be negative")
        self.path = path
        header, self._replies = read_script_file(path)
        self._thinking = header.thinking
        self.dialect = dialect if dialect is not None else header.dialect
        """The tool-call dialect the replies are parsed in."""
        self._chunk = chunk_chars
        self._strict = strict_calls
        self._next = skip
        self._lock = threading.Lock()

    @property
    def info(self) -> BackendInfo:
        """The script path as the model name."""
        return BackendInfo(
            kind="script", model=str(self.path), device="none", dialect=self.dialect.name
        )

    @property
    def replies_left(self) -> int:
        """How many replies the script still holds."""
        return len(self._replies) - self._next

    def _take(self) -> ScriptedReply | None:
        with self._lock:
            if self._next >= len(self._replies):
                return None
            reply = self._replies[self._next]
            self._next += 1
            return reply

    def generate(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        settings: GenerationSettings,
        cancel: threading.Event | None = None,
    ) -> Iterator[EngineEvent]:
        """Stream the script's next reply; running out of replies finishes with an error.

        The reply is cut at `settings.max_tokens` estimated tokens (`length`), and a prompt
        whose estimate exceeds `settings.max_context` finishes with `max_context_len`.
        """
        prompt_tokens = estimate_prompt_tokens(messages, tools)
        if prompt_tokens >= settings.max_context:
            yield Finished(
                "max_context_len",
                error=f"the prompt (about {prompt_tokens} tokens) does not fit the context "
                f"budget of {settings.max_context} tokens",
            )
            return
        reply = self._take()
        if reply is None:
            yield Finished(
                "error",
                error=f"the script {self.path} has no reply left: it holds "
                f"{len(self._replies)} replies and the run asked for reply {self._next + 1}",
            )
            return
        if reply.error:
            yield Finished("error", error=f"{self.path} line {reply.line}: {reply.error}")
            return
        parser = self.dialect.parser(
            tools,
            starts_in_reasoning=settings.enable_thinking
            if self._thinking is None
            else self._thinking,
            id_prefix=f"call_{reply.line}_",
            strict=self._strict,
        )
        yield from self._stream(reply.text, parser, settings, prompt_tokens, cancel)

    def _stream(
        self,
        text: str,
        parser: ToolCallParser,
        settings: GenerationSettings,
        prompt_tokens: int,
        cancel: threading.Event | None,
    ) -> Iterator[EngineEvent]:
        limit = settings.max_tokens * CHARS_PER_TOKEN
        cut = len(text) > limit
        if cut:
            text = text[:limit]
        called = False
        for start in range(0, len(text), self._chunk):
            if cancel is not None and cancel.is_set():
                yield Finished("cancelled", raw_text=text[:start])
                return
            for event in parser.feed(text[start : start + self._chunk]):
                called = called or isinstance(event, ToolCallEvent | ToolCallError)
                yield event
            yield Decoded(estimate_tokens(text[: start + self._chunk]))
        for event in parser.finish():
            called = called or isinstance(event, ToolCallEvent | ToolCallError)
            yield event
        yield Usage(
            prompt_tokens=prompt_tokens,
            evaluated_tokens=prompt_tokens,
            reused_tokens=0,
            completion_tokens=estimate_tokens(text),
        )
        reason: FinishReason = "length" if cut else "tool_calls" if called else "stop"
        yield Finished(reason, raw_text=text)

    def count_tokens(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> int:
        """An estimate (characters / 4): the script backend has no tokenizer."""
        return estimate_prompt_tokens(messages, tools)

    def close(self) -> None:
        """Nothing to free."""
