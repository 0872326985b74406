"""The core's interface to the faces: one session being worked on and every operation around it
(the `Workbench` the TUI uses), and what the command line does beyond it (`HeadlessWorkbench`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from frogdesk.attempts.record import AttemptsOutcome
from frogdesk.attempts.spec import AttemptsSpec
from frogdesk.config import Settings
from frogdesk.core.history import HistoryItem
from frogdesk.core.reviewing import SessionReview
from frogdesk.engine.chat import BackendInfo
from frogdesk.leaf.events import LoopEvent
from frogdesk.models.progress import ProgressCallback
from frogdesk.models.retry import NO_RETRY, RetryPolicy
from frogdesk.models.switch_plan import SwitchPlan
from frogdesk.review.apply import ApplyResult
from frogdesk.review.decisions import HunkDecisions
from frogdesk.review.records import ApplyState
from frogdesk.review.undo import UndoResult
from frogdesk.sessions.active import ActiveSession
from frogdesk.sessions.operator import Operator as Operator  # re-exported: the faces implement it
from frogdesk.sessions.record import SessionRecord, SessionSpec
from frogdesk.sessions.sendback import SentBack
from frogdesk.sessions.service import SessionOutcome
from frogdesk.sessions.store import DamagedSession

S = TypeVar("S", bound="AgentSession", covariant=True)


@dataclass(frozen=True)
class Switched(Generic[S]):
    """A model switch done: the model now loaded, the session on it, the tokens re-read."""

    info: BackendInfo
    session: S | None
    """The session that moved (None when there was none)."""
    reread: int = 0
    """Tokens of the conversation the model evaluated to take it over (0: at its next run)."""


AttemptEvents = Callable[[int, LoopEvent], None]
"""Receives each attempt's loop events with its index, from the attempts' threads."""


class AgentSession(Protocol):
    """One session of the core: a worktree, a transcript and the Leaf loop over them."""

    @property
    def record(self) -> SessionRecord:
        """The stored session record."""
        ...

    def run(self, prompt: str, cancel: threading.Event, emit: Callable[[LoopEvent], None]) -> None:
        """Run the loop on a task (first call) or on a new user message (later calls; "" continues).

        Blocking: every loop event goes to `emit` on the calling thread. Setting `cancel`
        stops generation or the running tool within one step; the run then ends with
        `RunFinished("cancelled")`. A message after a final answer is a new user turn on
        the same transcript.
        """
        ...

    def history(self) -> Sequence[HistoryItem]:
        """The conversation so far as a face shows it: user turns and the steps' events."""
        ...

    def changed_files(self) -> int:
        """How many files of the worktree differ from the session's base snapshot."""
        ...

    def toolchain(self) -> list[str]:
        """What the session's shell finds: each tool's path inside its sandbox (python with its
        version and venv) or "not found", then what of the launch environment it is not shown
        and why; [] when the session is not open for a run. Runs one command in the sandbox."""
        ...


@dataclass(frozen=True)
class SessionSummary:
    """One row of the sessions list."""

    record: SessionRecord
    changed_files: int = 0
    applied: str = "not applied"
    """Whether its changes were applied (and undone), in words (review.records.ApplyState)."""


class Workbench(Protocol):
    """Every operation a face offers on sessions and models; injected so tests can replay."""

    def backend_info(self) -> BackendInfo:
        """The loaded backend, for the status bar."""
        ...

    def server_model(self) -> str:
        """The model an openai endpoint reports ("" for other backends); may block."""
        ...

    def sandbox_level(self) -> str:
        """The shell isolation level sessions get."""
        ...

    def new_session(self, task: str, operator: Operator) -> AgentSession:
        """Create a worktree and a session for a task (blocking: call from a worker); the
        session asks and tells `operator`, the face's user, for all its runs."""
        ...

    def open_session(self, session_id: str, operator: Operator) -> AgentSession:
        """Reopen a stored session of any status but discarded (blocking): an interrupted one
        resumes, a finished one continues with the next user message."""
        ...

    def sessions(self) -> Sequence[SessionSummary]:
        """Stored sessions of this repository, newest first (blocking)."""
        ...

    def discard(self, session_id: str) -> SessionRecord:
        """Remove a session's worktree, the session marked discarded (blocking); refused while
        another process runs it."""
        ...

    def review(self, session_id: str) -> SessionReview:
        """The session's diff with its saved decisions, recorded as shown (blocking)."""
        ...

    def decide(self, review: SessionReview, decisions: HunkDecisions) -> None:
        """Keep the user's approvals, rejections and edits of the session's hunks (blocking)."""
        ...

    def apply(
        self, review: SessionReview, hunk_ids: Collection[str], decisions: HunkDecisions
    ) -> ApplyResult:
        """Write the chosen hunks to the repository, undoably; nothing on a conflict (blocking)."""
        ...

    def undo(self, session_id: str) -> UndoResult | None:
        """Undo the session's newest apply; None when there is none (blocking)."""
        ...

    def send_back(
        self, session_id: str, comment: str, operator: Operator
    ) -> tuple[SentBack, AgentSession]:
        """Revert the rejected hunks and queue the review's feedback for the model: what was
        reverted and the message it gets, and the session, whose next run continues
        (blocking)."""
        ...

    def price_switch(
        self, model: str, session_id: str | None, context_tokens: int = 0
    ) -> SwitchPlan:
        """What moving to `model` (a .gguf path or a spec on disk) costs and which warnings it
        carries (blocking): for a session held open here, from the tokens it holds (or
        `context_tokens`); for a stored one, from its transcript; with none, for the next
        session. Raises ModelError when the model is not on this machine."""
        ...

    def switch_model(
        self,
        model: str,
        session_id: str | None,
        operator: Operator,
        *,
        cancel: threading.Event | None = None,
        progress: Callable[[float], None] | None = None,
        overrides: dict[str, Any] | None = None,
    ) -> Switched[AgentSession]:
        """Move to `model` (blocking; `progress` hears the fraction loaded), the rules
        `price_switch` announced: a session held open here keeps its conversation, re-read
        now when it was running or at its next run; a stored session is reopened on the model
        and re-read now (with `overrides`, its raised limits); with no session the model
        serves the next one. On failure the old model stays."""
        ...

    def watch_prefill(self, heard: Callable[[int, int], None] | None) -> bool:
        """Have the loaded model report each prompt prefill as it reads it (tokens read,
        tokens to read; from the decoding thread); False where the backend cannot."""
        ...

    def detect_check(self) -> tuple[str, str]:
        """The repository's check command and why it was chosen ("", "" when none)."""
        ...

    def run_attempts(
        self,
        task: str,
        n: int,
        check: str,
        operator: Operator,
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
    ) -> tuple[SessionRecord, list[str]]:
        """Make an attempt the session under review, the others discarded unless kept: its
        record and the ids discarded (blocking)."""
        ...


class RunningSession(AgentSession, Protocol):
    """A session the command line runs to its end: opened (blocking), run, closed, and what
    the run ended with read back."""

    @property
    def outcome(self) -> SessionOutcome | None:
        """What the latest run ended with (result, patch, trajectory); None before one ends."""
        ...

    def prepare(self, prompt: str = "") -> ActiveSession:
        """Open the session for its next run (blocking): worktree, shell and backend ready."""
        ...

    def close(self) -> None:
        """Release what the session holds open (its shell, its backend's sequence)."""
        ...


class StoredSessions(Protocol):
    """The sessions on disk as the command line handles them, beyond what the TUI shows."""

    def stored_sessions(self) -> tuple[list[SessionRecord], list[DamagedSession]]:
        """Every repository's sessions, and the session folders that cannot be read."""
        ...

    def applied(self, session_id: str) -> ApplyState:
        """How many times the session was applied and undone (never raises)."""
        ...

    def session_dir(self, session_id: str) -> Path:
        """The folder holding a session's transcript, records and result files."""
        ...

    def damaged_lines(self, session_id: str) -> Path:
        """Where `repair` sets a session's unreadable transcript lines aside."""
        ...

    def repair(self, session_id: str) -> int:
        """Set a session's unreadable transcript lines aside; how many (0: nothing to repair)."""
        ...

    def add_message(self, session_id: str, text: str) -> None:
        """Queue the user's next message to a stored session, for its next run (blocking)."""
        ...

    def apply_all(self, session_id: str, show: Callable[[str], None]) -> str:
        """Show every hunk of a session through `show` and apply exactly those; the report."""
        ...


class HeadlessWorkbench(Workbench, StoredSessions, Protocol):
    """The Workbench as the command line uses it: sessions started from a whole spec and run
    to their end, attempts from a whole spec, Hub quants pulled for a switch."""

    @property
    def settings(self) -> Settings:
        """The settings every new session starts from."""
        ...

    def start(self, spec: SessionSpec, operator: Operator) -> RunningSession:
        """Create the worktree and the session `spec` describes (blocking)."""
        ...

    def open_session(
        self, session_id: str, operator: Operator, overrides: dict[str, Any] | None = None
    ) -> RunningSession:
        """Reopen a stored session; its next run continues it, with `overrides` (raised
        limits) in place of the session's own settings."""
        ...

    def send_back(
        self, session_id: str, comment: str, operator: Operator
    ) -> tuple[SentBack, RunningSession]:
        """As the Workbench's, the session handed back to be run to its end."""
        ...

    def switch_model(
        self,
        model: str,
        session_id: str | None,
        operator: Operator,
        *,
        cancel: threading.Event | None = None,
        progress: Callable[[float], None] | None = None,
        overrides: dict[str, Any] | None = None,
    ) -> Switched[RunningSession]:
        """As the Workbench's, the session handed back to be run to its end."""
        ...

    def pull_missing(
        self,
        spec: str,
        *,
        token: str | None = None,
        retry: RetryPolicy = NO_RETRY,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> tuple[Path | None, list[str]]:
        """Pull the Hub quant `spec` names when it is not on disk: the file (None when
        nothing was pulled) and the lines to tell the user."""
        ...

    def start_attempts(
        self,
        attempts: AttemptsSpec,
        operator: Operator,
        cancel: threading.Event,
        on_event: AttemptEvents,
        *,
        results_root: Path | None = None,
    ) -> AttemptsOutcome:
        """The attempts `attempts` describes (blocking); the operator hears the session ids
        once they exist (`attempts: ID ...`), result files go under `results_root`."""
        ...
