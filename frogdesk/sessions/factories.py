"""The shapes of what builds a session's parts: its backend and its shell (types only)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from frogdesk.config import Settings
from frogdesk.engine.chat import Backend
from frogdesk.sandbox.shells.protocol import Shell
from frogdesk.sessions.record import SessionRecord
from frogdesk.worktree.checkout import Worktree


@dataclass(frozen=True)
class ShellPick:
    """The shell a session got, its level and why (shown to the user)."""

    shell: Shell
    level: str
    reason: str = ""
    warnings: tuple[str, ...] = ()


class BackendFactory(Protocol):
    """Builds the backend of a session from its record and settings."""

    def __call__(self, record: SessionRecord, settings: Settings, replies_done: int = 0) -> Backend:
        """A ready backend; `replies_done` replies were already used before a resume."""
        ...


ShellFactory = Callable[[str, Worktree, Settings], ShellPick]
"""Builds the shell of a session: (requested sandbox, worktree, settings) -> ShellPick."""
