"""Messages that thread workers post back to the UI thread."""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.message import Message

from frogdesk.core.history import HistoryItem
from frogdesk.core.ports import AgentSession, Workbench
from frogdesk.engine.chat import BackendInfo


@dataclass
class SessionOpened(Message):
    """A session was created or resumed by a worker and is ready to run."""

    session: AgentSession
    prompt: str
    """The prompt to run (empty continues the transcript)."""
    run: bool = True
    """False when a stored session was opened (it waits for Enter or a message)."""
    history: list[HistoryItem] = field(default_factory=list)
    """The stored conversation to show, for an opened session."""


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


@dataclass
class WorkbenchReady(Message):
    """A model is loaded (first run): the app opens a session screen on this workbench."""

    workbench: Workbench


@dataclass
class LibraryNotice(Message):
    """A library warning that matters to the user, in one inert line (from any thread)."""

    text: str
