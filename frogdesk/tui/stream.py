"""A thread-safe buffer that coalesces loop events between two UI frames."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from frogdesk.engine.types import ContentDelta, ReasoningDelta
from frogdesk.leaf.events import LoopEvent


@dataclass
class EventBuffer:
    """Collects loop events from a worker thread; the UI drains them once per frame.

    Consecutive reasoning or content deltas are merged into one event, so a frame
    costs one widget update however many tokens arrived since the last one.
    """

    _events: list[LoopEvent] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _pushed: int = 0

    def push(self, event: LoopEvent) -> None:
        """Add one event (any thread)."""
        with self._lock:
            self._pushed += 1
            last = self._events[-1] if self._events else None
            if isinstance(event, ContentDelta) and isinstance(last, ContentDelta):
                self._events[-1] = ContentDelta(last.text + event.text)
            elif isinstance(event, ReasoningDelta) and isinstance(last, ReasoningDelta):
                self._events[-1] = ReasoningDelta(last.text + event.text)
            else:
                self._events.append(event)

    def drain(self) -> list[LoopEvent]:
        """Take every event pushed since the last drain, merged (UI thread)."""
        with self._lock:
            events, self._events = self._events, []
            return events

    @property
    def pushed(self) -> int:
        """How many events were pushed in all, before merging."""
        with self._lock:
            return self._pushed
