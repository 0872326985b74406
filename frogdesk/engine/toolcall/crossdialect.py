"""A reply written in the other dialect's form: recovered and counted, or answered with an error.

A model sometimes writes its call in a form it was not taught here (Qwen2.5 a fenced JSON
object where its template says XML, FrogNano an XML block where the template says Hermes).
The model's own parser reads the reply; a second parser of the other dialect reads it too.
Where the model's parser found no call and the other one reads whole calls, those calls
are taken, each named with the drift `other_dialect_<dialect>`; where the other one sees a
call it cannot read, the model gets one error that names both forms and tries again. A
reply that looks like a call is never silently the final answer (DESIGN.md, invariant 12).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from frogdesk.engine.chat import EngineEvent, ToolCallError, ToolCallEvent

OTHER_DIALECT = "other_dialect_"
"""The prefix of the drift recorded for a call read in the other dialect."""


class _Parser(Protocol):
    def feed(self, text: str) -> list[EngineEvent]: ...

    def finish(self) -> list[EngineEvent]: ...


@dataclass(frozen=True)
class DialectNames:
    """A dialect's id, its title for people and the form its error messages show."""

    name: str
    title: str
    form: str


def other_dialect_drift(name: str) -> str:
    """The drift name of a call read in dialect `name` by another dialect's parser."""
    return OTHER_DIALECT + name


def wrong_dialect_message(seen: DialectNames, own: DialectNames) -> str:
    """The error the model gets, and the line a person reads, for a call in the wrong form."""
    return (
        f"Invalid tool call: the model's reply looked like a tool call in {seen.title} but not "
        f"in this model's dialect ({own.title}). Call a tool as {own.form}."
    )


@dataclass
class CrossDialectParser:
    """The model's parser, with the other dialect's parser reading the same text alongside.

    Errors of the model's parser are held until its first call or the reply's end, so that
    a reply the other dialect reads whole can replace them; the other events pass at once.
    """

    primary: _Parser
    shadow: _Parser
    own: DialectNames
    other: DialectNames
    _held: list[ToolCallError] = field(default_factory=list)
    _shadow_events: list[EngineEvent] = field(default_factory=list)
    _called: bool = False

    def feed(self, text: str) -> list[EngineEvent]:
        """Parse the next piece of the reply; returns the events it completes."""
        events = self.primary.feed(text)
        if not self._called:
            self._shadow_events += self.shadow.feed(text)
        return self._pass(events)

    def finish(self) -> list[EngineEvent]:
        """Flush at the end of the reply; decides what a call-less reply in the other form is."""
        events = self._pass(self.primary.finish())
        if self._called:
            return events
        self._shadow_events += self.shadow.finish()
        calls = [e for e in self._shadow_events if isinstance(e, ToolCallEvent)]
        errors = [e for e in self._shadow_events if isinstance(e, ToolCallError)]
        drift = other_dialect_drift(self.other.name)
        if calls and not errors:
            self._held.clear()
            return events + [ToolCallEvent(c.call, recovered=(drift, *c.recovered)) for c in calls]
        # The model's own errors stand unless they could not even name the tool the other
        # form names: then the other form is what the model meant.
        if (calls or errors) and (
            not self._held or (not any(h.name for h in self._held) and any(e.name for e in errors))
        ):
            raw = "".join(e.raw for e in errors)
            message = wrong_dialect_message(self.other, self.own)
            return [*events, ToolCallError(raw=raw, error=message)]
        held, self._held = self._held, []
        return events + list(held)

    def _pass(self, events: list[EngineEvent]) -> list[EngineEvent]:
        """The events to give now: errors held until a call comes."""
        out: list[EngineEvent] = []
        for event in events:
            if isinstance(event, ToolCallError) and not self._called:
                self._held.append(event)
                continue
            if isinstance(event, ToolCallEvent) and not self._called:
                self._called = True
                out += self._held
                self._held = []
            out.append(event)
        return out
