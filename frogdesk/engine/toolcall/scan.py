"""Scanning the text of one Qwen3-Coder XML tool call, resumably, as it streams in.

A value ends at the first `</parameter>` that is followed (after optional whitespace) by
`<parameter=`, `</function>` or `</tool_call>`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
CALL_OPEN = "<tool_call>"
CALL_CLOSE = "</tool_call>"
FUNCTION_OPEN = "<function="
FUNCTION_CLOSE = "</function>"
PARAM_OPEN = "<parameter="
PARAM_CLOSE = "</parameter>"
_VALUE_ENDERS = (PARAM_OPEN, FUNCTION_CLOSE, CALL_CLOSE)
MAX_NAME = 256


def is_prefix_of_any(text: str, tags: Sequence[str]) -> bool:
    """Whether `text` could still grow into one of `tags`."""
    return any(tag.startswith(text) for tag in tags)


def skip_space(text: str, pos: int) -> int:
    """The first offset at or after `pos` that is not whitespace."""
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


class Stage(Enum):
    """Where the scan of a call is."""

    FUNCTION = "function"
    BODY = "body"
    VALUE = "value"
    AFTER_FUNCTION = "after_function"
    SKIP = "skip"


@dataclass
class CallScanner:
    """Resumable scan of the text after one `<tool_call>`: feed by appending to `text`."""

    text: str = ""
    pos: int = 0
    stage: Stage = Stage.FUNCTION
    name: str | None = None
    params: list[tuple[str, str]] = field(default_factory=list)
    key: str = ""
    value_start: int = 0
    search_from: int = 0
    error: str = ""

    def _fail(self, message: str) -> None:
        self.error = message
        self.stage = Stage.SKIP
        self.search_from = self.pos

    def _tag_name(self, opener: str) -> str | None:
        """Read `opener NAME>` at pos; None when more text is needed (or after a failure)."""
        end = self.text.find(">", self.pos + len(opener))
        if end == -1:
            pending = self.text[self.pos + len(opener) :]
            if "\n" in pending or len(pending) > MAX_NAME:
                self._fail(f"the tag {opener}...> is not closed with '>'")
            return None
        name = self.text[self.pos + len(opener) : end].strip()
        self.pos = end + 1
        return name

    def scan(self) -> int | None:
        """Advance; the end offset just past `</tool_call>` when the call is complete."""
        while True:
            if self.stage is Stage.SKIP:
                end = self.text.find(CALL_CLOSE, self.search_from)
                if end == -1:
                    self.search_from = max(self.search_from, len(self.text) - len(CALL_CLOSE) + 1)
                    return None
                return end + len(CALL_CLOSE)
            if self.stage is Stage.VALUE:
                if not self._scan_value():
                    return None
                continue
            self.pos = skip_space(self.text, self.pos)
            rest = self.text[self.pos :]
            if self.stage is Stage.FUNCTION:
                if rest.startswith(FUNCTION_OPEN):
                    name = self._tag_name(FUNCTION_OPEN)
                    if name is None:
                        if self.error:
                            continue
                        return None
                    self.name = name
                    self.stage = Stage.BODY
                elif is_prefix_of_any(rest, (FUNCTION_OPEN,)):
                    return None
                else:
                    self._fail("expected <function=NAME> right after <tool_call>")
            elif self.stage is Stage.BODY:
                if rest.startswith(PARAM_OPEN):
                    key = self._tag_name(PARAM_OPEN)
                    if key is None:
                        if self.error:
                            continue
                        return None
                    self.key = key
                    self.stage = Stage.VALUE
                    self.value_start = self.search_from = self.pos
                elif rest.startswith(FUNCTION_CLOSE):
                    self.pos += len(FUNCTION_CLOSE)
                    self.stage = Stage.AFTER_FUNCTION
                elif rest.startswith(CALL_CLOSE):
                    self._fail("missing </function> before </tool_call>")
                elif is_prefix_of_any(rest, (PARAM_OPEN, FUNCTION_CLOSE, CALL_CLOSE)):
                    return None
                else:
                    self._fail("expected <parameter=KEY> or </function> inside <function=...>")
            else:  # AFTER_FUNCTION
                if rest.startswith(CALL_CLOSE):
                    return self.pos + len(CALL_CLOSE)
                if is_prefix_of_any(rest, (CALL_CLOSE,)):
                    return None
                self._fail("expected </tool_call> right after </function>")

    def _scan_value(self) -> bool:
        """Find the end of the current value; False when more text is needed."""
        while True:
            close = self.text.find(PARAM_CLOSE, self.search_from)
            if close == -1:
                self.search_from = max(self.value_start, len(self.text) - len(PARAM_CLOSE) + 1)
                return False
            after = skip_space(self.text, close + len(PARAM_CLOSE))
            ahead = self.text[after:]
            if ahead.startswith(_VALUE_ENDERS):
                raw = self.text[self.value_start : close]
                self.params.append((self.key, raw))
                self.pos = close + len(PARAM_CLOSE)
                self.stage = Stage.BODY
                return True
            if is_prefix_of_any(ahead, _VALUE_ENDERS):
                self.search_from = close
                return False
            self.search_from = close + 1

    def truncation_error(self) -> str:
        """What is missing when the reply ends inside this call."""
        if self.error:
            return f"{self.error}, and the reply ended before </tool_call>"
        if self.stage is Stage.FUNCTION and FUNCTION_OPEN in self.text:
            return "the reply ended inside the <function=NAME> tag"
        if self.stage is Stage.VALUE and PARAM_CLOSE in self.text[self.value_start :]:
            return f"the reply ended after the value of '{self.key}' (missing </function> and </tool_call>)"
        missing = {
            Stage.FUNCTION: "the reply ended before <function=NAME>",
            Stage.BODY: "the reply ended before </function> and </tool_call>",
            Stage.VALUE: f"the reply ended inside the value of '{self.key}' (missing </parameter>)",
            Stage.AFTER_FUNCTION: "the reply ended before </tool_call>",
        }
        return missing.get(self.stage, "the reply ended inside the call")
