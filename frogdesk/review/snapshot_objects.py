"""Blobs the review's snapshot writes itself: hashed and stored as loose objects, no git filter.

FrogDesk reads each worktree file through a descriptor and hands the bytes here; git never
opens a worktree file by name for the snapshot. Objects are written the way git writes loose
objects (zlib of `blob <size>\\0<bytes>`, named by its sha1 or sha256), linked into the user's
store so an existing object is never replaced. Which ids the store already holds, packed or
loose, is asked of git once per batch.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from frogdesk.review.gitcmd import GitError, run_git
from frogdesk.worktree.git import GitPaths

BATCH_BYTES = 64 << 20
"""Content held in memory before the missing objects of a batch are written."""
LOOSE_COMPRESSION = 1
"""git's own default for loose objects (core.looseCompression)."""


def blob_id(data: bytes, algorithm: str) -> str:
    """The object id git gives a blob of these bytes."""
    digest = hashlib.new(algorithm)
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def _write_loose(store: Path, oid: str, data: bytes) -> None:
    """Link one loose blob into store; an object already there is left as it is."""
    folder = store / oid[:2]
    target = folder / oid[2:]
    if os.path.lexists(target):
        return
    folder.mkdir(exist_ok=True)
    out, tmp_name = tempfile.mkstemp(prefix="tmp_obj_", dir=folder)
    try:
        try:
            packed = zlib.compress(b"blob %d\0" % len(data) + data, LOOSE_COMPRESSION)
            view = memoryview(packed)
            while view:
                view = view[os.write(out, view) :]
            os.fchmod(out, 0o444)
        finally:
            os.close(out)
        with contextlib.suppress(FileExistsError):
            os.link(tmp_name, target)  # a link never replaces an existing file
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)


@dataclass
class BlobWriter:
    """Collects blobs and writes those the user's store lacks, a batch at a time."""

    paths: GitPaths
    algorithm: str
    pending: dict[str, bytes] = field(default_factory=dict)
    size: int = 0

    def add(self, data: bytes) -> str:
        """The blob's id; its bytes are stored by the next flush unless the store has it."""
        oid = blob_id(data, self.algorithm)
        store = self.paths.common_dir / "objects"
        if oid not in self.pending and not os.path.lexists(store / oid[:2] / oid[2:]):
            self.pending[oid] = data
            self.size += len(data)
            if self.size >= BATCH_BYTES:
                self.flush()
        return oid

    def flush(self) -> None:
        """Write every pending blob git does not already have (packed ones included)."""
        if not self.pending:
            return
        query = "".join(f"{oid}\n" for oid in self.pending).encode()
        out = run_git(self.paths, ["cat-file", "--batch-check"], stdin=query).stdout
        store = self.paths.common_dir / "objects"
        for line in out.decode("ascii", "replace").splitlines():
            oid, _, what = line.partition(" ")
            if what == "missing" and oid in self.pending:
                try:
                    _write_loose(store, oid, self.pending[oid])
                except OSError as exc:
                    raise GitError(f"cannot write a git object into {store}: {exc}") from None
        self.pending.clear()
        self.size = 0
