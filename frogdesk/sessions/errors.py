"""The sessions package's own errors."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Protocol

from frogdesk.errors import FrogDeskError


class Damage(Protocol):
    """What is wrong with a session's files (`store.DamagedSession`)."""

    def describe(self) -> str:
        """One line for the user."""
        ...


class SessionNotFoundError(FrogDeskError, LookupError):
    """No session with that id (or unique id prefix)."""


class SessionClosedError(FrogDeskError, ValueError):
    """The session was discarded: its worktree is gone, it cannot run again."""


class ApplyRefusedError(FrogDeskError, RuntimeError):
    """Applying a session's changes conflicted with the user's files; nothing was written."""


class TaskTextError(FrogDeskError, ValueError):
    """The task text cannot be stored as UTF-8 (bytes from argv that are not UTF-8)."""


class SwitchRefusedError(FrogDeskError, ValueError):
    """The session cannot move to that model (not a llama session, or the model cannot hold it)."""


class PatchError(FrogDeskError, RuntimeError):
    """git could not diff the worktree; the message carries git's own words."""


class SessionBusyError(FrogDeskError, ValueError):
    """The session is running in another process; it must stop before it is sent back."""


class StagingLostError(FrogDeskError, OSError):
    """The hidden folder of a session being started was removed under it (a cleanup that
    ran at the very moment it was made); nothing of the session is kept: start it again."""


class SessionDamagedError(FrogDeskError, ValueError):
    """A session's record or transcript cannot be read; the message names the file and the way on."""

    def __init__(self, damage: Damage) -> None:
        super().__init__(damage.describe())
        self.damage = damage


class StoreWriteError(FrogDeskError, OSError):
    """A session file could not be written because the disk is full, over quota or read-only.

    What was on disk before the write is intact (a record is replaced atomically, a
    transcript line is appended whole or not at all), so the session can be resumed.
    """

    def __init__(self, path: Path, cause: OSError) -> None:
        super().__init__(cause.errno, cause.strerror)
        self.path = path
        self.cause = cause

    def __str__(self) -> str:
        why = {
            errno.ENOSPC: "the disk is full",
            errno.EDQUOT: "the disk quota is used up",
            errno.EROFS: "the file system is read-only",
        }.get(self.cause.errno or 0, self.cause.strerror or "write failed")
        return f"cannot write {self.path}: {why}"
