"""Streaming parser for Qwen3-Coder XML tool calls and the `<think>` reasoning split.

The format, as the Qwen3.5 chat template teaches it:

    <tool_call>
    <function=NAME>
    <parameter=KEY>
    VALUE
    </parameter>
    </function>
    </tool_call>

A value ends at the first `</parameter>` that is followed (after optional whitespace) by
`<parameter=`, `</function>` or `</tool_call>`. So a value may hold any text, `<`,
XML and `</parameter>` included, except `</parameter>` directly followed by one of those
three tags: that is the one string the format cannot carry. The single newline the format
puts after `<parameter=KEY>` and before `</parameter>` is not part of the value.

Drifts from the format that have one reading are recovered (see `scan.Drift`) and named on
the call's event; where the tool's schema cannot tell two readings apart, the call becomes
a `ToolCallError` that says why, so the model can write it again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import Enum

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
from frogdesk.engine.toolcall.calls import BareCall, Outcome, Verdict, WrappedCall
from frogdesk.engine.toolcall.scan import (
    CALL_CLOSE,
    CALL_OPEN,
    FUNCTION_CLOSE,
    FUNCTION_OPEN,
    MAX_NAME,
    PARAM_CLOSE,
    PARAM_OPEN,
    THINK_CLOSE,
    THINK_OPEN,
    Drift,
    peek_name,
    skip_space,
)
from frogdesk.engine.toolcall.values import (
    ToolSpec,
    build_arguments,
    strip_one_newline,
    tool_specs,
)


def render_tool_call_xml(call: ToolCall) -> str:
    """The XML text of one call, exactly as the Qwen3.5 template renders it.

    Mappings and lists are written as JSON, strings verbatim, other values as JSON scalars.
    """
    parts = [f"{CALL_OPEN}\n{FUNCTION_OPEN}{call.name}>\n"]
    for key, value in call.arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        parts.append(f"{PARAM_OPEN}{key}>\n{text}\n{PARAM_CLOSE}\n")
    parts.append(f"{FUNCTION_CLOSE}\n{CALL_CLOSE}")
    return "".join(parts)


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
    BARE = "bare"
    DEFERRED = "deferred"
    """A `<tool_call>` came before `</think>`: reasoning if a `</think>` follows, else a call."""


class QwenXmlToolParser:
    """Split a streamed reply into reasoning, content and tool calls as text arrives.

    Reasoning runs until `</think>` (the generation prompt opens `<think>`; a reply that
    opens `<think>` itself is handled too). A `<tool_call>` before any `</think>` is held:
    if a `</think>` follows, everything before it is reasoning (as the chat template reads
    it); if the reply ends first, the model skipped the tag and the call closes the
    reasoning. A reply that never closes its reasoning otherwise stays reasoning. Text
    that could be the start of a tag is held back until it is not. Malformed calls become
    `ToolCallError` events, never exceptions. The events a reply gives do not depend on
    how its text was split into chunks.

    By default only the XML structure is checked and the rest is left to the tools, as
    Leaf and SGLang's qwen3_coder parser in the vendor's setup do: values that do not fit
    their type stay text, an unknown function is still a call (the runner answers
    `Unknown tool: NAME`), and a missing argument is the tool's own error. `strict` True
    also checks each call against its tool's schema: unknown function or parameter,
    missing required parameter, a value of the wrong type.
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
        self._call: WrappedCall | None = None
        self._bare: BareCall | None = None
        self._deferred = ""
        self._deferred_search = 0
        self._eat_call_close = False
        self._skipped_think = False
        self._content_tags = (CALL_OPEN, FUNCTION_OPEN) if self._specs else (CALL_OPEN,)

    def feed(self, text: str) -> list[EngineEvent]:
        """Parse the next piece of the reply; returns the events it completes."""
        self._buf += text
        events: list[EngineEvent] = []
        while self._step(events, final=False):
            pass
        return events

    def finish(self) -> list[EngineEvent]:
        """Flush at the end of the reply; a call left open becomes a `ToolCallError`."""
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
            outcome = call.finish()
            self._enter(_Mode.CONTENT)
            self._buf = call.text[outcome.end :]
            events.append(self._decided(outcome, CALL_OPEN + call.text[: outcome.end]))
            return bool(self._buf)
        if self._mode is _Mode.BARE and self._bare is not None:
            self._not_a_call(events, self._bare.text + self._buf)
            return True
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

    def _enter(self, mode: _Mode) -> None:
        self._mode = mode
        self._segment_start = True
        self._pending_space = ""

    def _step(self, events: list[EngineEvent], *, final: bool) -> bool:
        """Consume what can be consumed now; True when another step may make progress."""
        if self._mode is _Mode.CALL:
            return self._step_call(events)
        if self._mode is _Mode.BARE:
            return self._step_bare(events)
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
        if (
            self._eat_call_close
            and self._mode is _Mode.CONTENT
            and not self._eat_stray_call_close(final)
        ):
            return False
        if self._mode is _Mode.REASONING:
            tags: tuple[str, ...] = (THINK_CLOSE, CALL_OPEN)
        else:
            tags = self._content_tags
        found = [(i, tag) for tag in tags if (i := self._buf.find(tag)) != -1]
        if found:
            index, tag = min(found)
            self._emit(events, self._buf[:index])
            if tag == THINK_CLOSE:
                self._buf = self._buf[index + len(tag) :]
                self._enter(_Mode.CONTENT)
            elif tag == FUNCTION_OPEN:
                self._buf = self._buf[index:]
                return self._maybe_bare(events, final)
            elif self._mode is _Mode.REASONING:
                self._deferred = self._buf[index:]
                self._deferred_search = 0
                self._buf = ""
                self._mode = _Mode.DEFERRED
            else:
                self._buf = self._buf[index + len(tag) :]
                self._enter(_Mode.CALL)
                self._call = WrappedCall(self._specs)
            return True
        hold = 0 if final else _partial_tag(self._buf, tags)
        self._emit(events, self._buf[: len(self._buf) - hold])
        self._buf = self._buf[len(self._buf) - hold :]
        return False

    def _eat_stray_call_close(self, final: bool) -> bool:
        """After a bare block, drop a `</tool_call>` that closes it; False to wait for text."""
        after = skip_space(self._buf, 0)
        rest = self._buf[after:]
        if rest.startswith(CALL_CLOSE):
            self._buf = rest[len(CALL_CLOSE) :]
        elif not final and CALL_CLOSE.startswith(rest):
            return False
        self._eat_call_close = False
        return True

    def _maybe_bare(self, events: list[EngineEvent], final: bool) -> bool:
        """At `<function=` in content: a bare call when it names an offered tool."""
        name = peek_name(self._buf, len(FUNCTION_OPEN))
        if name is None and not final and len(self._buf) <= len(FUNCTION_OPEN) + MAX_NAME:
            return False
        if name is not None and name in self._specs:
            self._bare = BareCall(self._buf, self._specs)
            self._buf = ""
            self._mode = _Mode.BARE
            return True
        self._not_a_call(events, self._buf)
        return True

    def _not_a_call(self, events: list[EngineEvent], text: str) -> None:
        """`<function=` that opens no call is content; the text after it is read again."""
        self._bare = None
        self._mode = _Mode.CONTENT
        self._emit(events, FUNCTION_OPEN)
        self._buf = text[len(FUNCTION_OPEN) :]

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
        self._buf = call.text[outcome.end :]
        self._enter(_Mode.CONTENT)
        events.append(self._decided(outcome, CALL_OPEN + call.text[: outcome.end]))
        return True

    def _step_bare(self, events: list[EngineEvent]) -> bool:
        bare = self._bare
        assert bare is not None
        outcome = bare.feed(self._buf)
        self._buf = ""
        if outcome is None:
            return False
        if outcome.verdict is Verdict.NOT_A_CALL:
            self._not_a_call(events, bare.text)
            return True
        self._bare = None
        self._buf = bare.text[outcome.end :]
        self._enter(_Mode.CONTENT)
        self._eat_call_close = True
        events.append(self._decided(outcome, bare.text[: outcome.end]))
        return True

    def _message(self, name: str | None, problem: str) -> str:
        where = f"Invalid tool call to '{name}'" if name else "Invalid tool call"
        return (
            f"{where}: {problem}. Call a tool as <tool_call>\\n<function=NAME>\\n"
            "<parameter=KEY>\\nVALUE\\n</parameter>\\n</function>\\n</tool_call>."
        ).replace("\\n", "\n")

    def _decided(self, outcome: Outcome, raw: str) -> ToolCallEvent | ToolCallError:
        reading = outcome.reading
        name = (reading.name or "") if reading is not None else ""
        if outcome.verdict is not Verdict.CALL or reading is None:
            return ToolCallError(raw=raw, error=self._message(name, outcome.problem), name=name)
        spec = self._specs.get(name)
        if spec is None and name and not self._strict:
            spec = ToolSpec(name, {})
        if spec is None:
            offered = ", ".join(self._specs) or "none"
            return ToolCallError(
                raw=raw,
                error=f"Unknown function '{name}'. The available functions are: {offered}.",
                name=name,
            )
        drifts = list(reading.drifts)
        if self._skipped_think:
            self._skipped_think = False
            drifts.insert(0, Drift.THINK_CLOSE_MISSING)
        params = [(key, strip_one_newline(value)) for key, value in reading.params]
        arguments, problems = build_arguments(spec, params, strict=self._strict, drifts=drifts)
        if problems:
            return ToolCallError(
                raw=raw,
                error=f"Invalid tool call to '{name}': {'; '.join(problems)}.",
                name=name,
            )
        if reading.ambiguity:
            return ToolCallError(raw=raw, error=self._message(name, reading.ambiguity), name=name)
        call_id = f"{self._id_prefix}{self._calls}"
        self._calls += 1
        return ToolCallEvent(
            ToolCall(name=name, arguments=arguments, id=call_id), recovered=tuple(drifts)
        )


def parse_reply(
    text: str,
    tools: Sequence[ToolSchema],
    *,
    starts_in_reasoning: bool = True,
    strict: bool = False,
) -> list[EngineEvent]:
    """All events of a complete reply (a convenience over `feed` + `finish`)."""
    parser = QwenXmlToolParser(tools, starts_in_reasoning=starts_in_reasoning, strict=strict)
    return parser.feed(text) + parser.finish()
