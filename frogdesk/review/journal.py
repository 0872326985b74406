"""The journal of an apply or undo in progress: every file's before and after state, on disk first."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from frogdesk.durable import atomic_write_text, fsync_dir
from frogdesk.errors import FrogDeskError
from frogdesk.review.gitcmd import git_out
from frogdesk.review.refmove import RefMove
from frogdesk.review.target import StateRef
from frogdesk.typedjson import build

JOURNAL_FILE = "transaction.json"
LOCK_FILE = "transaction.lock"
STAGING_DIR = "frogdesk-staging"
"""Under the repository's git folder: same file system as the working tree, never in it."""

TransactionKind = Literal["apply", "undo"]


@dataclass
class JournalEntry:
    """One path: its state before and after, and the staged file that holds the after state."""

    path: str
    before: StateRef | None
    after: StateRef | None
    staged: str = ""
    """File name in the staging folder ("" when the after state is absence)."""
    perms: int = 0
    """Permission bits the after state gets (a regular file only)."""


@dataclass
class Journal:
    """An apply or undo: once this is on disk, the next FrogDesk command finishes or reverts it."""

    id: str
    kind: TransactionKind
    session_id: str
    repo: str
    staging: str
    record_id: str
    files: list[JournalEntry] = field(default_factory=list)
    new_dirs: list[str] = field(default_factory=list)
    """Folders the after state needs that did not exist before, parents first."""
    history: RefMove | None = None
    """The move of HEAD's branch and index that comes after the files (--commit, or its undo)."""

    def to_json(self) -> str:
        """Serialize as JSON."""
        return json.dumps(asdict(self), indent=1)  # ASCII: a name that is not UTF-8 keeps its bytes

    @classmethod
    def from_json(cls, text: str) -> Journal:
        """Parse a journal written by to_json; a damaged one raises ValueError naming what."""
        return build(cls, json.loads(text))


def new_journal(kind: TransactionKind, session_id: str, repo: Path, record_id: str) -> Journal:
    """An empty journal with a fresh id and its staging folder under the repository's git dir."""
    tx_id = f"{time.time_ns():020d}-{secrets.token_hex(3)}"
    git_dir = Path(git_out(repo, ["rev-parse", "--absolute-git-dir"]).decode().strip())
    staging = git_dir / STAGING_DIR / tx_id
    if os.stat(git_dir).st_dev != os.stat(repo).st_dev:
        raise FrogDeskError(
            f"{git_dir} is on another file system than {repo}; "
            "FrogDesk stages files there to write them atomically, so nothing was written"
        )
    return Journal(tx_id, kind, session_id, str(repo), str(staging), record_id)


def save_journal(session_dir: Path, journal: Journal) -> None:
    """Write the journal durably: from here on a crash is finished or reverted, never half."""
    atomic_write_text(session_dir / JOURNAL_FILE, journal.to_json())


def load_journal(session_dir: Path) -> Journal | None:
    """The unfinished journal of a session, if any."""
    try:
        text = (session_dir / JOURNAL_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        return Journal.from_json(text)
    except (ValueError, KeyError, TypeError) as exc:
        raise FrogDeskError(
            f"{session_dir / JOURNAL_FILE} is damaged ({exc}); "
            "check your files against `frogdesk review`, then delete it"
        ) from None


def remove_journal(session_dir: Path) -> None:
    """The transaction is complete: forget it, durably."""
    with contextlib.suppress(FileNotFoundError):
        (session_dir / JOURNAL_FILE).unlink()
    fsync_dir(session_dir)


def pending_sessions(sessions_root: Path) -> list[Path]:
    """Session folders that hold an unfinished journal."""
    if not sessions_root.is_dir():
        return []
    return sorted(p.parent for p in sessions_root.glob(f"*/{JOURNAL_FILE}"))


@contextlib.contextmanager
def session_lock(session_dir: Path, *, wait: bool) -> Iterator[bool]:
    """Hold the session's transaction lock; yields False when `wait` is off and it is taken.

    The lock dies with its process (a SIGKILL releases it), so a journal whose lock is
    free belongs to a process that is gone and may be recovered.
    """
    session_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(session_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)
