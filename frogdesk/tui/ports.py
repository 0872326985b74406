"""The seams the TUI drives: a running agent session and the services around it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from frogdesk.attempts.record import AttemptsOutcome
from frogdesk.engine.types import BackendInfo
from frogdesk.leaf.events import LoopEvent
from frogdesk.sessions.record import SessionRecord

ApproveCommand = Callable[[str], bool]
"""Asked from a worker thread before a Bash command runs; True lets it run."""

AttemptEvents = Callable[[int, LoopEvent], None]
"""Receives each attempt's loop events with its index, from the attempts' threads."""


class AgentSession(Protocol):
    """One session of the core: a worktree, a transcript and the Leaf loop over them."""

    @property
    def record(self) -> SessionRecord:
        """The stored session record."""
        ...

    def run(self, prompt: str, cancel: threading.Event, emit: Callable[[LoopEvent], None]) -> None:
        """Run the loop on a task (first call) or on more guidance (later calls; "" continues).

        Blocking: every loop event goes to `emit` on the calling thread. Setting `cancel`
        stops generation or the running tool within one step; the run then ends with
        `RunFinished("cancelled")`.
        """
        ...

    def changed_files(self) -> int:
        """How many files of the worktree differ from the session's base snapshot."""
        ...


@dataclass(frozen=True)
class SessionSummary:
    """One row of the sessions list."""

    record: SessionRecord
    changed_files: int = 0


class Workbench(Protocol):
    """What the TUI needs from the core, injected so tests can run on the script backend."""

    def backend_info(self) -> BackendInfo:
        """The loaded backend, for the status bar."""
        ...

    def server_model(self) -> str:
        """The model an openai endpoint reports ("" for other backends); may block."""
        ...

    def sandbox_level(self) -> str:
        """The shell isolation level sessions get."""
        ...

    def new_session(self, task: str, approve: ApproveCommand) -> AgentSession:
        """Create a worktree and a session for a task (blocking: call from a worker)."""
        ...

    def resume(self, session_id: str, approve: ApproveCommand) -> AgentSession:
        """Reopen a stored session (blocking)."""
        ...

    def sessions(self) -> Sequence[SessionSummary]:
        """Stored sessions of this repository, newest first (blocking)."""
        ...

    def discard(self, session_id: str) -> None:
        """Remove a session and its worktree (blocking)."""
        ...

    def session_dir(self, session_id: str) -> Path:
        """The folder of a session's files (decisions, undo records)."""
        ...

    def send_back(self, session_id: str, comment: str, approve: ApproveCommand) -> AgentSession:
        """Queue the review's feedback for the model; running the result continues (blocking)."""
        ...

    def detect_check(self) -> tuple[str, str]:
        """The repository's check command and why it was chosen ("", "" when none)."""
        ...

    def run_attempts(
        self,
        task: str,
        n: int,
        check: str,
        approve: ApproveCommand,
        cancel: threading.Event,
        on_event: AttemptEvents,
    ) -> AttemptsOutcome:
        """Run N attempts at a task and `check` ("" for none) in each (blocking)."""
        ...

    def attempt_patch(self, session_id: str) -> str:
        """An attempt's worktree diff against its base (blocking)."""
        ...

    def choose_attempt(
        self, outcome: AttemptsOutcome, session_id: str, keep_others: bool
    ) -> SessionRecord:
        """Make an attempt the session under review; discard the others unless kept."""
        ...
