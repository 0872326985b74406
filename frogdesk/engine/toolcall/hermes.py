"""Streaming parser for Hermes tool calls (JSON in `<tool_call>`) and the `<think>` reasoning split.

The format, as the Qwen2.5 and Qwen3 chat templates teach it:

    <tool_call>
    {"name": NAME, "arguments": {...}}
    </tool_call>

Reasoning and `<tool_call>` inside it are read as the XML parser reads them (see
`QwenXmlToolParser`). Drifts with one reading are recovered and named on the call (see
`HermesDrift`): the object in a ``` fence or a wrapper tag, a bare object with `name` and
`arguments` at the start of a line, `arguments` as a JSON string, a missing `</tool_call>`.
A call that does not parse becomes a `ToolCallError` that says why and shows the form, so
the model can write it again; the events never depend on how the text was split.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from enum import Enum
from typing import Any

from frogdesk.engine.chat import (
    ContentDelta,
    EngineEvent,
    ReasoningDelta,
    Recovered,
    ToolCall,
    ToolCallError,
    ToolCallEvent,
    ToolSchema,
)
from frogdesk.engine.toolcall.hermes_scan import (
    CALL_CLOSE,
    CALL_OPEN,
    Head,
    LooseCall,
    Outcome,
    Verdict,
    WrappedCall,
    read_head,
)
from frogdesk.engine.toolcall.scan import THINK_CLOSE, THINK_OPEN, Drift
from frogdesk.engine.toolcall.values import ToolSpec, check_arguments, tool_specs

FORM = '<tool_call>\n{"name": NAME, "arguments": {...}}\n</tool_call>'
"""The form the error messages show the model."""


def render_tool_call_hermes(call: ToolCall) -> str:
    """The Hermes text of one call, as the Qwen2.5 template renders it (`tojson` of the arguments)."""
    name = json.dumps(call.name, ensure_ascii=False)
    arguments = json.dumps(call.arguments, ensure_ascii=False)
    return f'{CALL_OPEN}\n{{"name": {name}, "arguments": {arguments}}}\n{CALL_CLOSE}'


def _partial_tag(text: str, tags: Sequence[str]) -> int:
    """Length of the longest suffix of `text` that could be the start of one of `tags`."""
    start = text.rfind("<")
    if start == -1:
        return 0
    tail = text[start:]
    if any(len(tail) < len(tag) and tag.startswith(tail) for tag in tags):
        return len(tail)
    return 0


class _Mode(Enum):
    REASONING = "reasoning"
    CONTENT = "content"
    CALL = "call"
    DEFERRED = "deferred"
    """A `<tool_call>` came before `</think>`: reasoning if a `</think>` follows, else a call."""


class HermesToolParser:
    """Split a streamed reply into reasoning, content and Hermes tool calls as text arrives.

    `strict` False (Leaf's way) leaves arguments to the tools: an unknown function is still
    a call (the runner answers `Unknown tool: NAME`) and arguments that are not an object
    run as none. `strict` True checks each call against its tool's schema.
    """

    def __init__(
        self,
        tools: Sequence[ToolSchema],
        *,
        starts_in_reasoning: bool = True,
        id_prefix: str = "call_",
        strict: bool = False,
    ) -> None:
        self._specs: dict[str, ToolSpec] = tool_specs(tools)
        self._strict = strict
        self._mode = _Mode.REASONING if starts_in_reasoning else _Mode.CONTENT
        self._id_prefix = id_prefix
        self._calls = 0
        self._buf = ""
        self._reply_start = True
        self._segment_start = True
        self._pending_space = ""
        self._line_start = True
        """Whether `_buf` starts at the start of a line (loose calls open only there)."""
        self._call: WrappedCall | LooseCall | None = None
        self._deferred = ""
        self._deferred_search = 0
        self._skipped_think = False

    def feed(self, text: str) -> list[EngineEvent]:
        """Parse the next piece of the reply; returns the events it completes."""
        self._buf += text
        events: list[EngineEvent] = []
        while self._step(events, final=False):
            pass
        return events

    def finish(self) -> list[EngineEvent]:
        """Flush at the end of the reply; a call left open is decided now."""
        events: list[EngineEvent] = []
        while True:
            while self._step(events, final=True):
                pass
            if not self._settle(events):
                break
        if self._buf:
            self._emit(events, self._buf)
            self._buf = ""
        self._pending_space = ""
        return events

    def _settle(self, events: list[EngineEvent]) -> bool:
        """Decide what the reply's end leaves open; True when there is text to parse again."""
        if self._mode is _Mode.CALL and self._call is not None:
            call, self._call = self._call, None
            self._decided(events, call, call.finish())
            return bool(self._buf)
        if self._mode is _Mode.DEFERRED:
            # No `</think>` came: the model skipped it, and its call closes the reasoning.
            self._buf = self._deferred + self._buf
            self._deferred = ""
            self._skipped_think = True
            self._enter(_Mode.CONTENT)
            return True
        return False

    # Text outside calls --------------------------------------------------------

    def _emit(self, events: list[EngineEvent], text: str) -> None:
        """Emit reasoning or content, trimming whitespace at both ends of each segment."""
        if self._segment_start:
            text = text.lstrip()
        combined = self._pending_space + text
        body = combined.rstrip()
        self._pending_space = combined[len(body) :]
        if not body:
            return
        self._segment_start = False
        if self._mode in (_Mode.REASONING, _Mode.DEFERRED):
            events.append(ReasoningDelta(body))
        else:
            events.append(ContentDelta(body))

    def _consume(self, events: list[EngineEvent], upto: int) -> None:
        """Emit `_buf[:upto]` as text and drop it, keeping track of line starts."""
        if upto <= 0:
            return
        piece = self._buf[:upto]
        self._buf = self._buf[upto:]
        self._line_start = piece.endswith("\n")
        self._emit(events, piece)

    def _enter(self, mode: _Mode) -> None:
        self._mode = mode
        self._segment_start = True
        self._pending_space = ""
        self._line_start = True

    def _step(self, events: list[EngineEvent], *, final: bool) -> bool:
        """Consume what can be consumed now; True when another step may make progress."""
        if self._mode is _Mode.CALL:
            return self._step_call(events)
        if self._mode is _Mode.DEFERRED:
            return self._step_deferred(events)
        if not self._buf:
            return False
        if self._reply_start:
            stripped = self._buf.lstrip()
            if not stripped:
                return False
            if stripped.startswith(THINK_OPEN):
                self._buf = stripped[len(THINK_OPEN) :]
                self._reply_start = False
                self._enter(_Mode.REASONING)
                return True
            if THINK_OPEN.startswith(stripped) and not final:
                return False
            self._reply_start = False
        if self._mode is _Mode.REASONING:
            return self._step_reasoning(events, final=final)
        return self._step_content(events, final=final)

    def _step_reasoning(self, events: list[EngineEvent], *, final: bool) -> bool:
        tags = (THINK_CLOSE, CALL_OPEN)
        found = [(i, tag) for tag in tags if (i := self._buf.find(tag)) != -1]
        if found:
            index, tag = min(found)
            self._consume(events, index)
            if tag == THINK_CLOSE:
                self._buf = self._buf[len(tag) :]
                self._enter(_Mode.CONTENT)
            else:
                self._deferred, self._buf = self._buf, ""
                self._deferred_search = 0
                self._mode = _Mode.DEFERRED
            return True
        hold = 0 if final else _partial_tag(self._buf, tags)
        self._consume(events, len(self._buf) - hold)
        return False

    def _step_content(self, events: list[EngineEvent], *, final: bool) -> bool:
        buf = self._buf
        call_at = buf.find(CALL_OPEN)
        stop = call_at if call_at != -1 else len(buf)
        line = 0 if self._line_start else buf.find("\n") + 1 or len(buf) + 1
        while line <= stop and line < len(buf) + (0 if final else 1):
            head = read_head(buf, line, final=final)
            if head.state is Head.YES:
                self._consume(events, line)
                head = replace(head, start=head.start - line)
                self._call = LooseCall(self._buf, head, self._specs)
                self._buf = ""
                self._mode = _Mode.CALL
                return True
            if head.state is Head.WAIT:
                self._consume(events, line)
                return False
            next_line = buf.find("\n", line)
            if next_line == -1:
                break
            line = next_line + 1
        if call_at != -1:
            self._consume(events, call_at)
            self._buf = self._buf[len(CALL_OPEN) :]
            self._call = WrappedCall(self._specs)
            self._mode = _Mode.CALL
            return True
        hold = 0 if final else _partial_tag(buf, (CALL_OPEN,))
        self._consume(events, len(buf) - hold)
        return False

    def _step_deferred(self, events: list[EngineEvent]) -> bool:
        self._deferred += self._buf
        self._buf = ""
        close = self._deferred.find(THINK_CLOSE, self._deferred_search)
        if close == -1:
            self._deferred_search = max(0, len(self._deferred) - len(THINK_CLOSE) + 1)
            return False
        events.append(Recovered(Drift.CALL_IN_REASONING))
        self._emit(events, self._deferred[:close])
        self._buf = self._deferred[close + len(THINK_CLOSE) :]
        self._deferred = ""
        self._enter(_Mode.CONTENT)
        return True

    # Calls -----------------------------------------------------------------------

    def _step_call(self, events: list[EngineEvent]) -> bool:
        call = self._call
        assert call is not None
        outcome = call.feed(self._buf)
        self._buf = ""
        if outcome is None:
            return False
        self._call = None
        self._decided(events, call, outcome)
        return True

    def _decided(
        self, events: list[EngineEvent], call: WrappedCall | LooseCall, outcome: Outcome
    ) -> None:
        """Emit what a decided candidate came to; the text after it is parsed again."""
        self._buf = call.text[outcome.end :] + self._buf
        if outcome.verdict is Verdict.CONTENT:
            self._mode = _Mode.CONTENT
            piece = call.text[: outcome.end]
            self._line_start = piece.endswith("\n")
            self._emit(events, piece)
            return
        self._enter(_Mode.CONTENT)
        wrapped = isinstance(call, WrappedCall)
        raw = (CALL_OPEN if wrapped else "") + call.text[: outcome.end]
        if not wrapped:
            raw = raw.strip()
        events.append(self._event(outcome, raw))

    def _message(self, name: str, problem: str) -> str:
        where = f"Invalid tool call to '{name}'" if name else "Invalid tool call"
        return f"{where}: {problem}. Call a tool as {FORM}."

    def _event(self, outcome: Outcome, raw: str) -> ToolCallEvent | ToolCallError:
        name = outcome.name
        if outcome.verdict is not Verdict.CALL:
            return ToolCallError(raw=raw, error=self._message(name, outcome.problem), name=name)
        spec = self._specs.get(name)
        if spec is None and not self._strict:
            spec = ToolSpec(name, {})
        if spec is None:
            offered = ", ".join(self._specs) or "none"
            return ToolCallError(
                raw=raw,
                error=f"Unknown function '{name}'. The available functions are: {offered}.",
                name=name,
            )
        arguments: Any = outcome.arguments
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            if self._strict:
                return ToolCallError(
                    raw=raw,
                    error=self._message(name, '"arguments" must be a JSON object'),
                    name=name,
                )
            arguments = {}  # Leaf runs a call whose arguments are not an object with none
        problems = check_arguments(spec, arguments) if self._strict else []
        if problems:
            return ToolCallError(
                raw=raw, error=f"Invalid tool call to '{name}': {'; '.join(problems)}.", name=name
            )
        drifts = list(outcome.drifts)
        if self._skipped_think:
            self._skipped_think = False
            drifts.insert(0, Drift.THINK_CLOSE_MISSING)
        call_id = f"{self._id_prefix}{self._calls}"
        self._calls += 1
        return ToolCallEvent(
            ToolCall(name=name, arguments=arguments, id=call_id), recovered=tuple(drifts)
        )


def parse_hermes_reply(
    text: str,
    tools: Sequence[ToolSchema],
    *,
    starts_in_reasoning: bool = False,
    strict: bool = False,
) -> list[EngineEvent]:
    """All events of a complete reply (a convenience over `feed` + `finish`)."""
    parser = HermesToolParser(tools, starts_in_reasoning=starts_in_reasoning, strict=strict)
    return parser.feed(text) + parser.finish()
