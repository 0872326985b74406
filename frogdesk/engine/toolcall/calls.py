"""Where a streamed call ends, and which reading of its text holds, decided the same way whole or streamed.

A call is decided at each candidate end (`</tool_call>`, or `</function>` for a bare block)
from the text up to it, never from where a chunk happened to end. The exact reading wins
when the format gives one; a recovered reading is taken where the exact one fails, or where
it is still open and the reply ends; where both read a whole call and the schema accepts
both, the call is refused as ambiguous instead of guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from frogdesk.engine.toolcall.scan import (
    CALL_CLOSE,
    FUNCTION_CLOSE,
    Drift,
    Reading,
    State,
    read_call,
    read_exact_call,
)
from frogdesk.engine.toolcall.values import ToolSpec, build_arguments, strip_one_newline

_EARLY_CHECK_LIMIT = 4096
"""A bare block is checked before its end only while this short (its tags, not its values)."""


class Verdict(Enum):
    """What the text of a call came to."""

    CALL = "call"
    ERROR = "error"
    NOT_A_CALL = "not_a_call"


@dataclass(frozen=True)
class Outcome:
    """A decided call: its reading (for CALL) or problem (for ERROR), and where it ended."""

    verdict: Verdict
    end: int
    """Offset in the call's text just past its last character."""
    reading: Reading | None = None
    problem: str = ""


def plausible(reading: Reading, specs: Mapping[str, ToolSpec]) -> bool:
    """Whether the tool's schema accepts a reading: known names, required ones, fitting types."""
    if reading.ambiguity:
        return False
    keys = [key for key, _ in reading.params]
    if len(set(keys)) != len(keys):
        return False
    spec = specs.get(reading.name or "")
    if spec is None or not spec.properties:
        return True
    params = [(key, strip_one_newline(raw)) for key, raw in reading.params]
    return not build_arguments(spec, params, strict=True)[1]


def _keys(reading: Reading) -> str:
    return "(" + ", ".join(key for key, _ in reading.params) + ")"


def decide_wrapped(body: str, specs: Mapping[str, ToolSpec]) -> tuple[State, Reading, str]:
    """Read a call whose `</tool_call>` follows `body`.

    Returns DONE with the reading to use (or with a problem for an ambiguous call), OPEN
    with a recovered reading to fall back on if the exact one never closes (or none), or
    FAILED with the exact reading's error.
    """
    fast = read_exact_call(body, specs)
    if fast is not None:
        return State.DONE, fast, ""
    exact = read_call(body, specs, closed=True, recover=False)
    if exact.state is State.DONE and not exact.may_differ():
        return State.DONE, exact, ""
    recovered = read_call(body, specs, closed=True, recover=True)
    if exact.state is State.DONE:
        if recovered.state is not State.DONE or recovered.params == exact.params:
            return State.DONE, exact, ""
        exact_ok, recovered_ok = plausible(exact, specs), plausible(recovered, specs)
        if recovered_ok and not exact_ok:
            return State.DONE, recovered, ""
        if exact_ok and recovered_ok:
            problem = (
                "a value is not closed with </parameter> where a tag follows, so the call"
                f" reads two ways: with parameters {_keys(exact)} or {_keys(recovered)}"
            )
            return State.DONE, exact, problem
        return State.DONE, exact, ""
    if exact.state is State.OPEN:
        return State.OPEN, recovered, ""
    if recovered.state is State.DONE:
        return State.DONE, recovered, ""
    return State.FAILED, exact, exact.error


class WrappedCall:
    """The text after one `<tool_call>`, fed as it streams, until the call is decided."""

    def __init__(self, specs: Mapping[str, ToolSpec]) -> None:
        self.text = ""
        self._specs = specs
        self._search = 0
        self._fallback: Outcome | None = None

    def feed(self, text: str) -> Outcome | None:
        """Append text; the outcome once a `</tool_call>` decides the call."""
        self.text += text
        while True:
            close = self.text.find(CALL_CLOSE, self._search)
            if close == -1:
                self._search = max(self._search, len(self.text) - len(CALL_CLOSE) + 1)
                return None
            self._search = close + 1
            end = close + len(CALL_CLOSE)
            state, reading, problem = decide_wrapped(self.text[:close], self._specs)
            if state is State.DONE:
                if problem:
                    return Outcome(Verdict.ERROR, end, reading, problem)
                return Outcome(Verdict.CALL, end, reading)
            if state is State.OPEN:
                if self._fallback is None and reading.state is State.DONE:
                    self._fallback = Outcome(Verdict.CALL, end, reading)
                continue
            if self._fallback is not None:
                return self._fallback
            return Outcome(Verdict.ERROR, end, reading, reading.error)

    def finish(self) -> Outcome:
        """The reply ended: the recovered reading if one closed, else what is missing."""
        if self._fallback is not None:
            return self._fallback
        reading = read_call(self.text, self._specs, closed=False, recover=False)
        if reading.state is State.FAILED:
            problem = f"{reading.error}, and the reply ended before </tool_call>"
        else:
            problem = reading.missing
        return Outcome(Verdict.ERROR, len(self.text), reading, problem)


class BareCall:
    """A `<function=NAME>` block without `<tool_call>`, from its `<function=` on."""

    def __init__(self, text: str, specs: Mapping[str, ToolSpec]) -> None:
        self.text = ""
        self._specs = specs
        self._search = 0
        self._checked = False
        self._first = text

    def feed(self, text: str) -> Outcome | None:
        """Append text; the outcome once a `</function>` or the tags decide the block."""
        self.text += self._first + text
        self._first = ""
        while True:
            close = self.text.find(FUNCTION_CLOSE, self._search)
            if close == -1:
                self._search = max(self._search, len(self.text) - len(FUNCTION_CLOSE) + 1)
                return self._early_check()
            self._search = close + 1
            end = close + len(FUNCTION_CLOSE)
            reading = read_call(self.text[:end], self._specs, closed=True, recover=False)
            if reading.state is State.OPEN:
                continue
            if reading.state is State.FAILED:
                return Outcome(Verdict.NOT_A_CALL, end)
            reading.drifts.insert(0, Drift.BARE_FUNCTION)
            if reading.ambiguity:
                return Outcome(Verdict.ERROR, end, reading, reading.ambiguity)
            return Outcome(Verdict.CALL, end, reading)

    def _early_check(self) -> Outcome | None:
        """Prose that mentions `<function=NAME>` fails at its tags: let it go on as content."""
        if self._checked or len(self.text) > _EARLY_CHECK_LIMIT:
            return None
        reading = read_call(self.text, self._specs, closed=False, recover=False)
        if reading.state is State.FAILED:
            return Outcome(Verdict.NOT_A_CALL, len(self.text))
        # Once inside a value only a `</function>` can decide; stop re-reading the tags.
        self._checked = bool(reading.params) or "value" in reading.missing
        return None
