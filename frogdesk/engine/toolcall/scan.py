"""Reading the text of one Qwen3-Coder XML tool call, exactly or with the drift recoveries.

A call is read whole, once its closing tag is known, so a streamed reply and the same reply
parsed at once give the same calls. The exact reading follows the format: a value ends at
the first `</parameter>` followed (after optional whitespace) by `<parameter=`,
`</function>` or the end of the call. The recovering reading also ends a value at a drifted
end marker (`</parameter1>`, `</parameter` without `>`) and, where `</parameter>` is
missing, at a line that opens a parameter of the tool not given yet or at a final
`</function>`; it reads a tag left without `>` up to its line's end when it names a known
tool or parameter, and a missing `</function>` before `</tool_call>`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from frogdesk.engine.toolcall.values import ToolSpec, is_text_schema

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
CALL_OPEN = "<tool_call>"
CALL_CLOSE = "</tool_call>"
FUNCTION_OPEN = "<function="
FUNCTION_CLOSE = "</function>"
PARAM_OPEN = "<parameter="
PARAM_CLOSE = "</parameter>"
_PARAM_CLOSE_STEM = "</parameter"
MAX_NAME = 256
# `</parameter` then up to 32 characters of drift and an optional `>`: `</parameter1>`,
# `</parameter_function>`, `</parameter` alone.
_DRIFTED_CLOSE = re.compile(r"</parameter([^<>\n]{0,32})(>?)")
_INSIDE_VALUE = re.compile(r"</parameter|<parameter=|</function>")
_SPACE = re.compile(r"\s*")


class Drift:
    """The recoveries, by the name recorded in trajectories, stats and the quant check."""

    BARE_FUNCTION = "bare_function"
    """`<function=NAME>...</function>` without the `<tool_call>` wrapper."""
    PARAMETER_CLOSE_MISSING = "parameter_close_missing"
    """No `</parameter>` before the next parameter of the tool or the final `</function>`."""
    PARAMETER_CLOSE_DRIFTED = "parameter_close_drifted"
    """`</parameter1>`, `</parameter_function>` or `</parameter` without `>`."""
    PYTHON_LITERAL = "python_literal"
    """A Python list or dict literal for an array or object parameter."""
    FUNCTION_CLOSE_MISSING = "function_close_missing"
    """No `</function>` before `</tool_call>`."""
    CALL_IN_REASONING = "call_in_reasoning"
    """A `<tool_call>` written before `</think>`: read as reasoning, as the template does."""
    THINK_CLOSE_MISSING = "think_close_missing"
    """A call after reasoning that never wrote `</think>`."""
    TAG_UNCLOSED = "tag_unclosed"
    """`<function=NAME` or `<parameter=KEY` ended by a newline instead of `>`."""


def is_prefix_of_any(text: str, tags: Sequence[str]) -> bool:
    """Whether `text` could still grow into one of `tags`."""
    return any(tag.startswith(text) for tag in tags)


def skip_space(text: str, pos: int) -> int:
    """The first offset at or after `pos` that is not whitespace."""
    match = _SPACE.match(text, pos)
    return match.end() if match else pos


class State(Enum):
    """How far a reading got."""

    DONE = "done"
    OPEN = "open"
    """The text ended before the call did (more text may complete it)."""
    FAILED = "failed"


@dataclass
class Reading:
    """One reading of a call's text: its name, raw parameters and what it recovered."""

    state: State = State.OPEN
    name: str | None = None
    params: list[tuple[str, str]] = field(default_factory=list)
    drifts: list[str] = field(default_factory=list)
    error: str = ""
    ambiguity: str = ""
    """Set when a value's end has two readings the schema cannot tell apart."""
    missing: str = ""
    """For an open reading: what the text ended before."""

    @property
    def given(self) -> set[str]:
        """Parameter names read so far."""
        return {key for key, _ in self.params}

    def may_differ(self) -> bool:
        """Whether the recovering reading could end a value earlier than this exact one."""
        return any(
            _PARAM_CLOSE_STEM in raw or PARAM_OPEN in raw or FUNCTION_CLOSE in raw
            for _, raw in self.params
        )


@dataclass
class CallReader:
    """Reads `<function=NAME>` ... up to the end of `text` against the offered tools.

    `closed` says the call's closing tag follows `text` (`</tool_call>`, or `</function>`
    for a bare block, whose text then ends with it); `recover` allows the drift recoveries.
    """

    text: str
    specs: Mapping[str, ToolSpec]
    closed: bool
    recover: bool
    reading: Reading = field(default_factory=Reading)
    pos: int = 0

    def read(self) -> Reading:
        """Read the whole text once."""
        self.pos = skip_space(self.text, 0)
        if not self.text.startswith(FUNCTION_OPEN, self.pos):
            if not self.closed and FUNCTION_OPEN.startswith(self.text[self.pos :]):
                return self._open("the reply ended before <function=NAME>")
            return self._fail("expected <function=NAME> right after <tool_call>")
        name = self._tag_name(FUNCTION_OPEN, self.specs)
        if name is None:
            return self.reading
        self.reading.name = name
        spec = self.specs.get(name) or ToolSpec(name, {})
        while self.reading.state is State.OPEN and not self.reading.missing:
            self._body_step(spec)
        return self.reading

    def _open(self, missing: str) -> Reading:
        self.reading.state = State.OPEN
        self.reading.missing = missing
        return self.reading

    def _fail(self, message: str) -> Reading:
        self.reading.state = State.FAILED
        self.reading.error = message
        return self.reading

    def _tag_name(self, opener: str, known: Mapping[str, Any]) -> str | None:
        """The name in `opener NAME>` at pos (None: open or failed, said in the reading)."""
        start = self.pos + len(opener)
        window = self.text[start : start + MAX_NAME + 1]
        gt, nl = window.find(">"), window.find("\n")
        if gt != -1 and (nl == -1 or gt < nl):
            self.pos = start + gt + 1
            return window[:gt].strip()
        if nl != -1:
            name = window[:nl].strip()
            if self.recover and name in known:
                self.reading.drifts.append(Drift.TAG_UNCLOSED)
                self.pos = start + nl + 1
                return name
        elif not self.closed and len(window) <= MAX_NAME:
            tag = "<function=NAME>" if opener == FUNCTION_OPEN else "<parameter=KEY>"
            self._open(f"the reply ended inside the {tag} tag")
            return None
        self._fail(f"the tag {opener}...> is not closed with '>'")
        return None

    def _body_step(self, spec: ToolSpec) -> None:
        self.pos = skip_space(self.text, self.pos)
        rest = self.text[self.pos : self.pos + len(PARAM_OPEN)]
        if self.pos == len(self.text):
            if not self.closed:
                self._open("the reply ended before </function> and </tool_call>")
            elif self.recover:
                self.reading.drifts.append(Drift.FUNCTION_CLOSE_MISSING)
                self.reading.state = State.DONE
            else:
                self._fail("missing </function> before </tool_call>")
        elif rest.startswith(PARAM_OPEN):
            key = self._tag_name(PARAM_OPEN, spec.properties)
            if key is not None:
                self._value(spec, key)
        elif self.text.startswith(FUNCTION_CLOSE, self.pos):
            after = skip_space(self.text, self.pos + len(FUNCTION_CLOSE))
            if after == len(self.text):
                if self.closed:
                    self.reading.state = State.DONE
                else:
                    self._open("the reply ended before </tool_call>")
            else:
                self._fail("expected </tool_call> right after </function>")
        elif not self.closed and is_prefix_of_any(
            self.text[self.pos :], (PARAM_OPEN, FUNCTION_CLOSE)
        ):
            self._open("the reply ended before </function> and </tool_call>")
        else:
            self._fail("expected <parameter=KEY> or </function> inside <function=...>")

    def _value(self, spec: ToolSpec, key: str) -> None:
        """Read the value of `key` starting at pos; leaves pos where the body goes on."""
        start = self.pos
        pattern = _INSIDE_VALUE if self.recover else None
        search = start
        while True:
            if pattern is None:
                at = self.text.find(_PARAM_CLOSE_STEM, search)
                match_at, tag = (at, _PARAM_CLOSE_STEM) if at != -1 else (-1, "")
            else:
                found = pattern.search(self.text, search)
                match_at, tag = (found.start(), found.group()) if found else (-1, "")
            if match_at == -1:
                break
            end = self._value_end(spec, key, start, match_at, tag)
            if end is not None:
                value_end, resume = end
                self.reading.params.append((key, self.text[start:value_end]))
                self.pos = resume
                return
            if self.reading.state is not State.OPEN:
                return
            search = match_at + 1
        self._open_in_value(key, start)

    def _open_in_value(self, key: str, start: int) -> None:
        if self.closed:
            # The call's end came inside this value: under these rules it is not the end.
            self._open(f"the reply ended inside the value of '{key}' (missing </parameter>)")
        elif PARAM_CLOSE in self.text[start:]:
            self._open(
                f"the reply ended after the value of '{key}' (missing </function> and </tool_call>)"
            )
        else:
            self._open(f"the reply ended inside the value of '{key}' (missing </parameter>)")

    def _value_end(
        self, spec: ToolSpec, key: str, start: int, at: int, tag: str
    ) -> tuple[int, int] | None:
        """Where the value ends and the body resumes, if the tag at `at` ends it."""
        text = self.text
        if tag == _PARAM_CLOSE_STEM and text.startswith(PARAM_CLOSE, at):
            tag_end = at + len(PARAM_CLOSE)
            if not self._ends_value(spec, key, skip_space(text, tag_end)):
                return None
            return at, tag_end
        if tag == _PARAM_CLOSE_STEM:
            match = _DRIFTED_CLOSE.match(text, at)
            assert match is not None
            exact = match.group(1) == "" and match.group(2) == ">"
            if not exact and not self.recover:
                return None
            after = skip_space(text, match.end())
            if not self._ends_value(spec, key, after):
                return None
            if not exact:
                self.reading.drifts.append(Drift.PARAMETER_CLOSE_DRIFTED)
            return at, match.end()
        if at != start and text[at - 1] != "\n":
            return None
        if tag == FUNCTION_CLOSE:
            if self.closed and skip_space(text, at + len(FUNCTION_CLOSE)) == len(text):
                self.reading.drifts.append(Drift.PARAMETER_CLOSE_MISSING)
                return at, at
            return None
        name = peek_name(text, at + len(PARAM_OPEN))
        props = spec.properties
        if name in props and name != key and name not in self.reading.given:
            self.reading.drifts.append(Drift.PARAMETER_CLOSE_MISSING)
            return at, at
        return None

    def _ends_value(self, spec: ToolSpec, key: str, after: int) -> bool:
        """Whether what follows an end marker at `after` makes it the end of the value."""
        text = self.text
        if after == len(text):
            return self.closed
        if text.startswith(FUNCTION_CLOSE, after):
            return True
        if not text.startswith(PARAM_OPEN, after):
            return False
        props = spec.properties
        if key not in props or not is_text_schema(props[key]):
            return True
        name = peek_name(text, after + len(PARAM_OPEN))
        if name is not None:
            unknown = name not in props and not spec.allows_extra
            if unknown or name == key or name in self.reading.given:
                self.reading.ambiguity = (
                    f"the value of '{key}' is followed by </parameter> and "
                    f"<parameter={name}>, and '{name}' is "
                    + ("not a parameter of the tool" if unknown else "given twice")
                    + f": either '{name}' is wrongly given or the value of '{key}' contains"
                    " those tags"
                )
        return True


def peek_name(text: str, start: int) -> str | None:
    """The name of a tag opened before `start`, up to `>` or the line's end (None if neither)."""
    window = text[start : start + MAX_NAME + 1]
    ends = [i for i in (window.find(">"), window.find("\n")) if i != -1]
    return window[: min(ends)].strip() if ends else None


def read_call(text: str, specs: Mapping[str, ToolSpec], *, closed: bool, recover: bool) -> Reading:
    """Read one call's text (after `<tool_call>`, before its `</tool_call>`)."""
    return CallReader(text, specs, closed=closed, recover=recover).read()


def read_exact_call(body: str, specs: Mapping[str, ToolSpec]) -> Reading | None:
    """The exact reading of a closed call with nothing unusual in it, or None to read it slowly.

    Gives the reading `read_call(body, specs, closed=True, recover=False)` gives whenever no
    value holds tag-like text and no boundary is ambiguous; otherwise None. Values are found
    with `str.find`, which is what keeps long values cheap.
    """
    pos = skip_space(body, 0)
    name = _exact_tag_name(body, pos, FUNCTION_OPEN)
    if name is None:
        return None
    spec = specs.get(name)
    props = spec.properties if spec is not None else {}
    extra = spec.allows_extra if spec is not None else True
    params: list[tuple[str, str]] = []
    seen: set[str] = set()
    before = ""
    pos = skip_space(body, body.index(">", pos) + 1)
    while not body.startswith(FUNCTION_CLOSE, pos):
        key = _exact_tag_name(body, pos, PARAM_OPEN)
        if key is None:
            return None
        start = body.index(">", pos) + 1
        # The first `</parameter` must be the exact close; a `</function>` inside the value
        # cannot end it in any reading (text follows), a `<parameter=` can: read it slowly.
        close = body.find(_PARAM_CLOSE_STEM, start)
        if close == -1 or not body.startswith(PARAM_CLOSE, close):
            return None
        raw = body[start:close]
        if props and PARAM_OPEN in raw:
            return None
        pos = skip_space(body, close + len(PARAM_CLOSE))
        if not body.startswith((PARAM_OPEN, FUNCTION_CLOSE), pos):
            return None
        if (
            (key in seen or (key not in props and not extra))
            and before in props
            and is_text_schema(props[before])
        ):
            return None
        params.append((key, raw))
        seen.add(key)
        before = key
    if body[pos + len(FUNCTION_CLOSE) :].strip():
        return None
    return Reading(State.DONE, name, params)


def _exact_tag_name(text: str, pos: int, opener: str) -> str | None:
    """The name in `opener NAME>` at pos when the tag is closed on its line, else None."""
    if not text.startswith(opener, pos):
        return None
    start = pos + len(opener)
    end = text.find(">", start, start + MAX_NAME + 1)
    if end == -1 or "\n" in text[start:end]:
        return None
    return text[start:end].strip()
