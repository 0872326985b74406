"""Where a transaction's contents come from: staged files, accepted only when exact, and record blobs."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

from frogdesk.review.journal import Journal
from frogdesk.review.model import SYMLINK_MODE
from frogdesk.review.records import blobs_dir
from frogdesk.review.target import FileState, StateRef

Source = Callable[[StateRef], FileState | None]
"""Where a state's content comes from: memory, the staging folder or the record's blobs."""


def staged_source(journal: Journal) -> Source:
    """Contents from the staging folder, accepted only when complete (hash and mode match)."""
    by_ref = {e.after: e for e in journal.files if e.after is not None and e.staged}

    def find(ref: StateRef) -> FileState | None:
        entry = by_ref.get(ref)
        if entry is None:
            return None
        return read_exact(Path(journal.staging) / entry.staged, ref, entry.perms)

    return find


def blob_source(session_dir: Path, record_id: str, fallback: Source) -> Source:
    """Contents from the apply record's blobs (by sha256), else from `fallback`."""
    blobs = blobs_dir(session_dir, record_id)

    def find(ref: StateRef) -> FileState | None:
        try:
            data = (blobs / ref.sha256).read_bytes()
        except FileNotFoundError:
            return fallback(ref)
        state = FileState(data, ref.mode)
        return state if StateRef.of(state) == ref else fallback(ref)

    return find


def read_exact(path: Path, ref: StateRef, perms: int) -> FileState | None:
    """The state at path if it is exactly `ref` with permission bits `perms` (0: any with
    the right executable bit); a torn or missing staged file, or one with other bits, is None."""
    try:
        info = path.lstat()
        if ref.mode == SYMLINK_MODE and stat.S_ISLNK(info.st_mode):
            data = os.fsencode(os.readlink(path))
        elif ref.mode != SYMLINK_MODE and _bits_match(info.st_mode, ref.mode, perms):
            data = path.read_bytes()
        else:
            return None
    except FileNotFoundError:
        return None
    if hashlib.sha256(data).hexdigest() != ref.sha256:
        return None
    return FileState(data, ref.mode)


def _bits_match(st_mode: int, git_mode: str, perms: int) -> bool:
    """A regular file whose bits are `perms`, or (perms 0) whose executable bit is git_mode's."""
    if not stat.S_ISREG(st_mode):
        return False
    if perms:
        return stat.S_IMODE(st_mode) == perms
    return bool(st_mode & stat.S_IXUSR) == (git_mode == "100755")
