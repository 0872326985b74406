"""Turning OpenAI chat-completion stream chunks (SSE) into engine events."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from frogdesk.engine.chat import (
    EngineEvent,
    FinishReason,
    ReasoningDelta,
    ToolCall,
    ToolCallError,
    ToolCallEvent,
    ToolSchema,
    Usage,
)
from frogdesk.engine.openai.errors import StreamError
from frogdesk.engine.toolcall.dialect import XML, ToolCallDialect, ToolCallParser
from frogdesk.engine.toolcall.scan import CALL_OPEN, THINK_CLOSE
from frogdesk.engine.toolcall.values import (
    NotJson,
    ToolSpec,
    check_arguments,
    load_json,
    tool_specs,
)

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "eos": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "error",
}


STREAM_BYTES_PER_TOKEN = 1024
"""Stream bytes a reply may take per token of its budget: a one-token SSE chunk is 200-400
bytes of JSON (ids, model name, delta), so this leaves room for verbose servers."""
STREAM_SLACK_BYTES = 1 << 20
"""Stream bytes a reply may take besides its tokens' (usage chunk, keep-alive comments)."""
MIN_TOKENS_PER_SECOND = 10.0
"""Slowest average rate a streamed reply may keep: a server slower than this is stopped."""
REPLY_SLACK_SECONDS = 180.0
"""Seconds a reply may take besides its tokens' (queueing, the prefill of a long context)."""


def reply_byte_cap(max_tokens: int) -> int:
    """Most bytes one streamed reply may take in total, from the per-turn token budget."""
    return STREAM_SLACK_BYTES + max(max_tokens, 1) * STREAM_BYTES_PER_TOKEN


def reply_time_cap(max_tokens: int) -> float:
    """Most seconds one reply may take in total, from the per-turn token budget (8,192
    tokens: 999 s); the per-read timeout alone lets a trickling stream run for ever."""
    return REPLY_SLACK_SECONDS + max(max_tokens, 1) / MIN_TOKENS_PER_SECOND


def bounded_lines(stream: Any, limit: int, total: int | None = None) -> Iterator[bytes]:
    """The lines of a response, refusing one over `limit` bytes, and the stream once it is
    over `total` bytes in all: nothing is read whole unbounded, not even in small lines."""
    left = total
    while True:
        want = limit if left is None else min(limit, left)
        line: bytes = stream.readline(want + 1)
        if not line:
            return
        if left is not None:
            left -= len(line)
            if left < 0:
                raise StreamError(
                    f"the reply is over {total:,} bytes in total (the cap for this turn's "
                    "token budget); stopped"
                )
        if len(line) > limit:
            raise StreamError(f"the server sent a line over {limit:,} bytes; refused")
        yield line


def read_capped(stream: Any, limit: int, what: str) -> bytes:
    """A whole reply body of at most `limit` bytes, else StreamError naming `what`."""
    body: bytes = stream.read(limit + 1)
    if len(body) > limit:
        raise StreamError(f"{what} is over {limit:,} bytes; refused")
    return body


def whole_reply_payload(body: bytes) -> str:
    """A non-streamed chat completion (the server ignored `stream`) as one stream chunk."""
    try:
        data = load_json(body)
    except NotJson:
        raise StreamError("the server sent a reply that is neither a stream nor JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
        raise StreamError("the server sent JSON that is not a chat completion")
    for choice in data["choices"]:
        if isinstance(choice, dict):
            choice["delta"] = choice.pop("message", None) or {}
    return json.dumps(data)


def iter_sse_data(lines: Iterable[bytes]) -> Iterator[str]:
    """The `data` payloads of a server-sent-event stream, up to `[DONE]`."""
    data: list[str] = []
    for raw in lines:
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if not line:
            if data:
                payload = "\n".join(data)
                data = []
                if payload.strip() == "[DONE]":
                    return
                yield payload
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data and "\n".join(data).strip() != "[DONE]":
        yield "\n".join(data)


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


class ChunkAssembler:
    """Folds chat-completion chunks into reasoning, content and tool-call events.

    Reasoning comes from `reasoning_content` (or `reasoning`) deltas. When the server
    does not split reasoning and thinking is on, content is held until `</think>` shows
    where reasoning ends; `<tool_call>` or the end of the reply first means it was content.
    Tool calls come from structured `tool_calls` deltas, or from calls in `dialect`'s form in
    the content when the server did not parse them. `strict` is the parser's (see `QwenXmlToolParser`).
    """

    def __init__(
        self,
        tools: Sequence[ToolSchema],
        *,
        thinking: bool,
        strict: bool = False,
        dialect: ToolCallDialect = XML,
    ) -> None:
        self._dialect = dialect
        self._tools = tools
        self._specs = tool_specs(tools)
        self._strict = strict
        self._undecided: str | None = "" if thinking else None
        self._parser: ToolCallParser | None = (
            None if thinking else dialect.parser(tools, starts_in_reasoning=False, strict=strict)
        )
        self._reasoning_started = False
        self._calls: dict[int, _PendingCall] = {}
        self._usage: Usage | None = None
        self.finish_reason: str | None = None
        """The server's finish reason, once it has sent one."""
        self._raw_reasoning: list[str] = []
        self._raw_content: list[str] = []

    def add(self, payload: str) -> list[EngineEvent]:
        """Fold one SSE data payload (a JSON chunk) into events."""
        try:
            chunk = load_json(payload)
        except NotJson:
            raise StreamError(
                f"the server sent a chunk that is not JSON: {payload[:200]!r}"
            ) from None
        if not isinstance(chunk, Mapping):
            raise StreamError(f"the server sent a chunk that is not an object: {payload[:200]!r}")
        if chunk.get("error"):
            error = chunk["error"]
            message = error.get("message", error) if isinstance(error, Mapping) else error
            raise StreamError(f"the server reported an error: {message}")
        events: list[EngineEvent] = []
        usage = chunk.get("usage")
        if isinstance(usage, Mapping):
            self._usage = _usage(usage)
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, Mapping) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if isinstance(delta, Mapping):
                events.extend(self._delta(delta))
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
        return events

    def _delta(self, delta: Mapping[str, Any]) -> list[EngineEvent]:
        events: list[EngineEvent] = []
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            events.extend(self._decide(held_is_reasoning=False))
            if not self._reasoning_started:
                reasoning = reasoning.lstrip()
            if reasoning:
                self._reasoning_started = True
                self._raw_reasoning.append(reasoning)
                events.append(ReasoningDelta(reasoning))
        content = delta.get("content")
        if isinstance(content, str) and content:
            self._raw_content.append(content)
            events.extend(self._content(content))
        for piece in delta.get("tool_calls") or []:
            if isinstance(piece, Mapping):
                self._tool_call_piece(piece)
        return events

    def _decide(self, *, held_is_reasoning: bool) -> list[EngineEvent]:
        """Leave the undecided state, parsing the held text as starting in reasoning or not."""
        if self._undecided is None:
            return []
        held, self._undecided = self._undecided, None
        self._parser = self._dialect.parser(
            self._tools, starts_in_reasoning=held_is_reasoning, strict=self._strict
        )
        return self._parser.feed(held)

    def _content(self, text: str) -> list[EngineEvent]:
        if self._undecided is not None:
            self._undecided += text
            if THINK_CLOSE in self._undecided:
                return self._decide(held_is_reasoning=True)
            if CALL_OPEN in self._undecided:
                # A server that splits reasoning sends no reasoning delta for an empty think block.
                return self._decide(held_is_reasoning=False)
            return []
        assert self._parser is not None
        return self._parser.feed(text)

    def _tool_call_piece(self, piece: Mapping[str, Any]) -> None:
        index = piece.get("index")
        if not isinstance(index, int):
            index = len(self._calls)
        pending = self._calls.setdefault(index, _PendingCall())
        if isinstance(piece.get("id"), str) and piece["id"]:
            pending.id = piece["id"]
        function = piece.get("function") or {}
        if isinstance(function, Mapping):
            if isinstance(function.get("name"), str):
                pending.name += function["name"]
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                pending.arguments += arguments
            elif isinstance(arguments, Mapping):
                pending.arguments += json.dumps(arguments, ensure_ascii=False)

    def finish(self) -> list[EngineEvent]:
        """Flush held text and emit the structured tool calls and the usage."""
        events = self._decide(held_is_reasoning=False)
        if self._parser is not None:
            events.extend(self._parser.finish())
        for number, index in enumerate(sorted(self._calls)):
            events.append(self._structured_call(self._calls[index], number))
        if self._usage is not None:
            events.append(self._usage)
        return events

    def _structured_call(self, pending: _PendingCall, number: int) -> ToolCallEvent | ToolCallError:
        raw = f'{{"name": {json.dumps(pending.name)}, "arguments": {pending.arguments or "{}"}}}'
        spec = self._specs.get(pending.name)
        if spec is None and pending.name and not self._strict:
            spec = ToolSpec(pending.name, {})
        if spec is None:
            offered = ", ".join(self._specs) or "none"
            return ToolCallError(
                raw=raw,
                error=f"Unknown function '{pending.name}'. The available functions are: {offered}.",
                name=pending.name,
            )
        try:
            arguments = load_json(pending.arguments) if pending.arguments.strip() else {}
        except NotJson as exc:
            if not self._strict:
                arguments = None  # Leaf runs such a call with no arguments
            else:
                return ToolCallError(
                    raw=raw,
                    error=f"Invalid tool call to '{pending.name}': the arguments are not valid JSON ({exc}).",
                    name=pending.name,
                )
        if not isinstance(arguments, dict) and not self._strict:
            arguments = {}
        if not isinstance(arguments, dict):
            return ToolCallError(
                raw=raw,
                error=f"Invalid tool call to '{pending.name}': the arguments must be a JSON object.",
                name=pending.name,
            )
        problems = check_arguments(spec, arguments) if self._strict else []
        if problems:
            return ToolCallError(
                raw=raw,
                error=f"Invalid tool call to '{pending.name}': {'; '.join(problems)}.",
                name=pending.name,
            )
        return ToolCallEvent(ToolCall(pending.name, arguments, id=pending.id or f"call_{number}"))

    def reason(self, *, called: bool) -> FinishReason:
        """The engine's finish reason for the server's (a reply with calls ends in `tool_calls`)."""
        mapped = _FINISH.get(self.finish_reason or "stop", "stop")
        if called and mapped == "stop":
            return "tool_calls"
        return mapped

    def raw_text(self) -> str:
        """The reply in the model's own format, rebuilt from what the server sent."""
        text = ""
        if self._raw_reasoning:
            text = "".join(self._raw_reasoning) + "\n" + THINK_CLOSE + "\n\n"
        text += "".join(self._raw_content)
        for index in sorted(self._calls):
            pending = self._calls[index]
            try:
                arguments = load_json(pending.arguments or "{}")
            except NotJson:
                arguments = {"arguments": pending.arguments}
            if isinstance(arguments, dict):
                text += "\n" + self._dialect.render_call(ToolCall(pending.name, arguments))
        return text


def _usage(usage: Mapping[str, Any]) -> Usage:
    prompt = int(usage.get("prompt_tokens") or 0)
    details = usage.get("prompt_tokens_details")
    cached = int(details.get("cached_tokens") or 0) if isinstance(details, Mapping) else 0
    return Usage(
        prompt_tokens=prompt,
        evaluated_tokens=max(prompt - cached, 0),
        reused_tokens=cached,
        completion_tokens=int(usage.get("completion_tokens") or 0),
    )
