"""A Workbench for TUI tests that replays loop events (until the core's runner is used)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from frogdesk.core.history import HistoryItem
from frogdesk.core.ports import Operator, SessionSummary
from frogdesk.engine.chat import BackendInfo
from frogdesk.leaf.events import LoopEvent, RunFinished, ToolFinished, ToolStarted
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.sendback import SentBack


@dataclass
class ReplaySession:
    """Yields a list of events per run; `gate` pauses it before event `pause_at`."""

    record: SessionRecord
    runs: list[list[LoopEvent]]
    pause_at: int | None = None
    gate: threading.Event = field(default_factory=threading.Event)
    prompts: list[str] = field(default_factory=list)
    changed: int = 0
    operator: Operator | None = None
    """Asked before each Bash call when set (the TUI's answer decides the observation)."""
    answers: list[bool] = field(default_factory=list)
    shown: list[HistoryItem] = field(default_factory=list)
    """What `history()` gives an opened session."""

    def run(self, prompt: str, cancel: threading.Event, emit: Callable[[LoopEvent], None]) -> None:
        for event in self._events(prompt, cancel):
            emit(event)

    def _events(self, prompt: str, cancel: threading.Event) -> Iterator[LoopEvent]:
        self.prompts.append(prompt)
        events = self.runs.pop(0) if self.runs else [RunFinished("agent", "done")]
        for i, event in enumerate(events):
            if self.pause_at is not None and i == self.pause_at:
                while not cancel.is_set() and not self.gate.is_set():
                    time.sleep(0.01)
            if cancel.is_set():
                yield RunFinished("cancelled", "", n_steps=1)
                return
            if isinstance(event, ToolStarted) and event.call.name == "Bash" and self.operator:
                answer = self.operator.approve(str(event.call.arguments.get("command", "")))
                self.answers.append(answer)
                if not answer:
                    yield event
                    yield ToolFinished(
                        event.step, event.index, event.call, "refused by the user", 0.0, False
                    )
                    yield RunFinished("agent", "", n_steps=1)
                    return
            yield event

    def history(self) -> list[HistoryItem]:
        return list(self.shown)

    def changed_files(self) -> int:
        return self.changed

    def toolchain(self) -> list[str]:
        return []


@dataclass
class ReplayWorkbench:
    """Hands out ReplaySessions; records what the TUI asked for."""

    session: ReplaySession
    info: BackendInfo = field(
        default_factory=lambda: BackendInfo("script", "FrogNano-4B", "Q4_K_M", "CPU", 4096)
    )
    level: str = "bwrap"
    tasks: list[str] = field(default_factory=list)
    discarded: list[str] = field(default_factory=list)
    sent_back: list[str] = field(default_factory=list)

    def backend_info(self) -> BackendInfo:
        return self.info

    def server_model(self) -> str:
        return ""

    def sandbox_level(self) -> str:
        return self.level

    prefill_heard: Callable[[int, int], None] | None = None
    """Who hears a prefill's progress (the TUI's hook while a run is under way)."""

    def watch_prefill(self, heard: Callable[[int, int], None] | None) -> bool:
        self.prefill_heard = heard
        return True

    fail_with: str = ""

    def new_session(self, task: str, operator: Operator) -> ReplaySession:
        self.tasks.append(task)
        if self.fail_with:
            raise RuntimeError(self.fail_with)
        self.session.operator = operator if self.level == "none" else None
        return self.session

    def open_session(self, session_id: str, operator: Operator) -> ReplaySession:
        return self.session

    def sessions(self) -> Sequence[SessionSummary]:
        return [SessionSummary(self.session.record, self.session.changed)]

    def discard(self, session_id: str) -> SessionRecord:
        self.discarded.append(session_id)
        return self.session.record

    def send_back(
        self, session_id: str, comment: str, operator: Operator
    ) -> tuple[SentBack, ReplaySession]:
        self.sent_back.append(comment)
        return SentBack(session_id, comment, []), self.session
