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
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import Enum

from frogdesk.engine.toolcall.scan import (
    CALL_CLOSE,
    CALL_OPEN,
    FUNCTION_CLOSE,
    FUNCTION_OPEN,
    PARAM_CLOSE,
    PARAM_OPEN,
    THINK_CLOSE,
    THINK_OPEN,
    CallScanner,
)
from frogdesk.engine.toolcall.values import ToolSpec, build_arguments, tool_specs
from frogdesk.engine.types import (
    ContentDelta,
    EngineEvent,
    ReasoningDelta,
    ToolCall,
    ToolCallError,
    ToolCallEvent,
    ToolSchema,
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


class QwenXmlToolParser:
    """Split a streamed reply into reasoning, content and tool calls as text arrives.

    Reasoning runs until `</think>` (the generation prompt opens `<think>`; a reply that
    opens `<think>` itself is handled too). A `<tool_call>` before any `</think>` closes
    the reasoning: the model skipped the tag. A reply that never closes its reasoning
    stays reasoning. Text that could be the start of a tag is held back until it is not.
    Malformed calls become `ToolCallError` events, never exceptions.

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
        self._scanner: CallScanner | None = None

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
        while self._step(events, final=True):
            pass
        if self._mode is _Mode.CALL and self._scanner is not None:
            scanner = self._scanner
            events.append(
                ToolCallError(
                    raw=CALL_OPEN + scanner.text,
                    error=self._message(scanner.name, scanner.truncation_error()),
                    name=scanner.name or "",
                )
            )
            self._scanner = None
            self._mode = _Mode.CONTENT
        elif self._buf:
            self._emit(events, self._buf)
            self._buf = ""
        self._pending_space = ""
        return events

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
        if self._mode is _Mode.REASONING:
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
        tags = (THINK_CLOSE, CALL_OPEN) if self._mode is _Mode.REASONING else (CALL_OPEN,)
        found = [(i, tag) for tag in tags if (i := self._buf.find(tag)) != -1]
        if found:
            index, tag = min(found)
            self._emit(events, self._buf[:index])
            self._buf = self._buf[index + len(tag) :]
            if tag == THINK_CLOSE:
                self._enter(_Mode.CONTENT)
            else:
                self._enter(_Mode.CALL)
                self._scanner = CallScanner()
            return True
        hold = 0 if final else _partial_tag(self._buf, tags)
        self._emit(events, self._buf[: len(self._buf) - hold])
        self._buf = self._buf[len(self._buf) - hold :]
        return False

    # Calls -----------------------------------------------------------------------

    def _step_call(self, events: list[EngineEvent]) -> bool:
        scanner = self._scanner
        assert scanner is not None
        scanner.text += self._buf
        self._buf = ""
        end = scanner.scan()
        if end is None:
            return False
        raw = CALL_OPEN + scanner.text[:end]
        self._buf = scanner.text[end:]
        self._scanner = None
        self._enter(_Mode.CONTENT)
        events.append(self._complete(scanner, raw))
        return True

    def _message(self, name: str | None, problem: str) -> str:
        where = f"Invalid tool call to '{name}'" if name else "Invalid tool call"
        return (
            f"{where}: {problem}. Call a tool as <tool_call>\\n<function=NAME>\\n"
            "<parameter=KEY>\\nVALUE\\n</parameter>\\n</function>\\n</tool_call>."
        ).replace("\\n", "\n")

    def _complete(self, scanner: CallScanner, raw: str) -> ToolCallEvent | ToolCallError:
        name = scanner.name or ""
        if scanner.error:
            return ToolCallError(raw=raw, error=self._message(name, scanner.error), name=name)
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
        params = [(key, _strip_one_newline(value)) for key, value in scanner.params]
        arguments, problems = build_arguments(spec, params, strict=self._strict)
        if problems:
            return ToolCallError(
                raw=raw,
                error=f"Invalid tool call to '{name}': {'; '.join(problems)}.",
                name=name,
            )
        call_id = f"{self._id_prefix}{self._calls}"
        self._calls += 1
        return ToolCallEvent(ToolCall(name=name, arguments=arguments, id=call_id))


def _strip_one_newline(value: str) -> str:
    """Drop the one newline the format adds on each side of a value."""
    if value.startswith("\n"):
        value = value[1:]
    if value.endswith("\n"):
        value = value[:-1]
    return value


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
