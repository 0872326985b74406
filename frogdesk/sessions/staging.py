"""A new session's folder is built under a hidden name and renamed into place when whole.

Starting a session makes a worktree and then the session's files; a crash in between must
leave either a whole session (listed, with its opening messages, resumable) or nothing.
The hidden folder exists before the worktree and is locked (flock) by the process building
it until it is renamed: a later FrogDesk that can take the lock knows that builder is gone
and removes what it left, worktree included. The kernel drops the lock of a killed process,
so no pid is guessed at and a build in progress is never touched.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from frogdesk.durable import fsync_dir
from frogdesk.sessions.errors import StagingLostError

STAGING_SUFFIX = ".starting"


def staging_path(root: Path, session_id: str) -> Path:
    """The hidden folder a session is built in before it appears as root/session_id."""
    return root / f".{session_id}{STAGING_SUFFIX}"


def staged_id(name: str) -> str | None:
    """The session id of a hidden staging folder's name; None for any other name."""
    if name.startswith(".") and name.endswith(STAGING_SUFFIX):
        return name[1 : -len(STAGING_SUFFIX)] or None
    return None


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@dataclass
class StagedSession:
    """A session folder being built, locked by this process until published or dropped."""

    session_id: str
    path: Path
    _fd: int = field(repr=False)
    published: bool = False

    @classmethod
    def begin(cls, root: Path, session_id: str) -> StagedSession:
        """Make and lock the hidden folder; FileExistsError if the session exists."""
        if (root / session_id).exists():
            raise FileExistsError(f"a session {session_id!r} exists already in {root}")
        root.mkdir(parents=True, exist_ok=True)
        path = staging_path(root, session_id)
        path.mkdir()
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        # A cleanup that took the lock first, or removed the folder before we locked it,
        # has left nothing to build in.
        if not _try_lock(fd) or os.fstat(fd).st_nlink == 0:
            os.close(fd)
            raise StagingLostError(f"{path} was removed while the session was being made")
        return cls(session_id, path, fd)

    def publish(self) -> Path:
        """Rename the whole folder into place, durably; the session now exists."""
        final = self.path.parent / self.session_id
        if final.exists():
            raise FileExistsError(f"a session {self.session_id!r} exists already")
        fsync_dir(self.path)
        os.rename(self.path, final)
        self.published = True
        fsync_dir(self.path.parent)
        self.close()
        return final

    def drop(self) -> None:
        """Remove the hidden folder (a start that failed before it was published)."""
        shutil.rmtree(self.path, ignore_errors=True)
        self.close()

    def close(self) -> None:
        """Release the lock; idempotent."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def clear_abandoned(root: Path, remove_worktree: Callable[[str], object]) -> list[str]:
    """Remove the staging folders whose builder is gone, and their worktrees; their ids.

    The lock is held while the leftovers are removed, so a builder cannot start over them.
    A worktree that cannot be removed keeps its staging folder, for the next try.
    """
    try:
        names = [e.name for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    cleared: list[str] = []
    for name in sorted(names):
        session_id = staged_id(name)
        if session_id is None:
            continue
        try:
            fd = os.open(root / name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue  # published or cleared meanwhile
        try:
            if not _try_lock(fd):
                continue  # its builder is alive
            with contextlib.suppress(Exception):
                remove_worktree(session_id)
                shutil.rmtree(root / name)
                cleared.append(session_id)
        finally:
            os.close(fd)
    return cleared
