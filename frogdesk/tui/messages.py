"""Messages that thread workers post back to the UI thread."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from frogdesk.engine.types import BackendInfo
from frogdesk.tui.ports import AgentSession


@dataclass
class SessionOpened(Message):
    """A session was created or resumed by a worker and is ready to run."""

    session: AgentSession
    prompt: str
    """The prompt to run (empty continues the transcript)."""
    run: bool = True
    """False when the session was only reopened (resume waits for Enter or guidance)."""


@dataclass
class RunEnded(Message):
    """The worker running the loop returned (the RunFinished event carries the details)."""

    changed_files: int


@dataclass
class WorkFailed(Message):
    """A worker raised; shown to the user as an error, never swallowed."""

    what: str
    error: str


@dataclass
class ChangedFiles(Message):
    """The session's worktree now differs from its base in this many files."""

    count: int


@dataclass
class QuantSwitched(Message):
    """Another model is loaded for the session."""

    info: BackendInfo
