"""A thread-safe buffer that coalesces loop events between two UI frames."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from frogdesk.engine.chat import ContentDelta, Decoded, ReasoningDelta
from frogdesk.leaf.events import LoopEvent, StepStarted

RATE_AFTER_SECONDS = 0.5
"""The live rate is said only once the reply has been decoding this long (one token early
on would swing it wildly)."""


@dataclass
class _Progress:
    """How far the current reply has come: a count and when it was first seen."""

    base: int = 0
    """The count when the clock started."""
    since: float = 0.0
    """When the first count came (clock seconds); 0.0: nothing yet."""
    count: int = 0

    def see(self, count: int, now: float) -> None:
        if not self.since:
            self.base, self.since = count, now
        self.count = count

    def rate(self, now: float) -> float | None:
        elapsed = now - self.since
        if not self.since or elapsed < RATE_AFTER_SECONDS:
            return None
        return (self.count - self.base) / elapsed


@dataclass(frozen=True)
class PromptProgress:
    """How far the prefill under way has read its prompt."""

    read: int
    total: int
    rate: float
    """Tokens read per second since it began; 0.0 before `RATE_AFTER_SECONDS`."""


@dataclass
class EventBuffer:
    """Collects loop events from a worker thread; the UI drains them once per frame.

    Consecutive reasoning or content deltas are merged into one event, so a frame
    costs one widget update however many tokens arrived since the last one. Progress
    (`Decoded`) is not queued: the buffer keeps the current reply's token count and when
    its first token came, for the live rate. A prefill's progress (`prefill`, heard from
    the engine between batches) is kept the same way, latest only.
    """

    clock: Callable[[], float] = time.monotonic
    _events: list[LoopEvent] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _pushed: int = 0
    _tokens: _Progress = field(default_factory=_Progress)
    _texts: _Progress = field(default_factory=_Progress)
    _prompt: _Progress = field(default_factory=_Progress)
    _prompt_total: int = 0

    def push(self, event: LoopEvent) -> None:
        """Add one event (any thread)."""
        now = self.clock()
        with self._lock:
            self._pushed += 1
            if isinstance(event, Decoded):
                self._tokens.see(event.tokens, now)
                return
            if isinstance(event, StepStarted):
                self._tokens, self._texts = _Progress(), _Progress()
            elif isinstance(event, ContentDelta | ReasoningDelta):
                self._texts.see(self._texts.count + 1, now)
            last = self._events[-1] if self._events else None
            if isinstance(event, ContentDelta) and isinstance(last, ContentDelta):
                self._events[-1] = ContentDelta(last.text + event.text)
            elif isinstance(event, ReasoningDelta) and isinstance(last, ReasoningDelta):
                self._events[-1] = ReasoningDelta(last.text + event.text)
            else:
                self._events.append(event)

    def prefill(self, done: int, total: int) -> None:
        """Hear a prefill's progress: tokens read of `total` (any thread; (0, total) starts one)."""
        now = self.clock()
        with self._lock:
            if done == 0 or total != self._prompt_total:
                self._prompt, self._prompt_total = _Progress(), total
            self._prompt.see(done, now)

    def prefill_ended(self) -> None:
        """Forget the prefill (the run ended, maybe before its prompt was read)."""
        with self._lock:
            self._prompt, self._prompt_total = _Progress(), 0

    def prompt_progress(self) -> PromptProgress | None:
        """The prefill under way; None when none is (or it has read its whole prompt)."""
        now = self.clock()
        with self._lock:
            read, total = self._prompt.count, self._prompt_total
            if not self._prompt.since or read >= total:
                return None
            return PromptProgress(read, total, self._prompt.rate(now) or 0.0)

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

    def live_rate(self) -> float | None:
        """Tokens per second of the reply being decoded, from its first token on (None
        before it has run `RATE_AFTER_SECONDS`). A backend that says no token counts
        (an endpoint) is measured by its text events, about one per token."""
        now = self.clock()
        with self._lock:
            progress = self._tokens if self._tokens.since else self._texts
            return progress.rate(now)
