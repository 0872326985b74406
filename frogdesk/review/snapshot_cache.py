"""Blob ids the snapshot already computed, keyed by a file's stat data, kept where only FrogDesk writes.

A large worktree is not reread at every step: a file whose (device, inode, size, mtime,
ctime, mode) match what was recorded for its path keeps its blob id. ctime is the part the
sandbox cannot choose (every write or chmod sets it to the current time), so an entry is
recorded only when the file's ctime is well before the snapshot began: a change after the
read then always gets a newer ctime. The cache lives beside the worktree in its private
folder (`<worktree>.sandbox/review-cache`), which no sandbox level can write (only its
`home`, `tmp` and `objects` subfolders are writable inside); a damaged file is ignored.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

SETTLE_NS = 2_000_000_000
"""How much older than the snapshot a file's ctime must be to be cached (coarse clocks)."""
CACHE_NAME = "blobs.json"

Key = tuple[int, int, int, int, int, int]


def stat_key(info: os.stat_result) -> Key:
    """The stat data a cached blob id is valid for."""
    return (
        info.st_dev,
        info.st_ino,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
        info.st_mode,
    )


@dataclass
class BlobCache:
    """path -> (stat key, git mode, blob id), for one worktree and one base commit."""

    folder: Path | None
    identity: str
    """The base commit and object format: the attributes and ids the entries were made with."""
    started_ns: int
    entries: dict[str, tuple[Key, str, str]] = field(default_factory=dict)
    fresh: dict[str, tuple[Key, str, str]] = field(default_factory=dict)

    @classmethod
    def load(cls, folder: Path | None, identity: str, started_ns: int) -> BlobCache:
        """The cache in folder (empty when there is none, it is damaged, or folder is None)."""
        cache = cls(folder, identity, started_ns)
        if folder is None:
            return cache
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
            fd = os.open(folder / CACHE_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as handle:
                data = json.loads(handle.read())
            if data["identity"] == identity:
                for path, (key, mode, oid) in data["entries"].items():
                    cache.entries[str(path)] = (tuple(int(k) for k in key), str(mode), str(oid))  # type: ignore[assignment]
        return cache

    def get(self, path: str, info: os.stat_result) -> tuple[str, str] | None:
        """(git mode, blob id) recorded for path with exactly this stat data, else None."""
        entry = self.entries.get(path)
        if entry is None or entry[0] != stat_key(info):
            return None
        self.fresh[path] = entry
        return entry[1], entry[2]

    def put(self, path: str, info: os.stat_result, mode: str, oid: str) -> None:
        """Remember a blob id read from a file whose stat data was info before and after."""
        if max(info.st_ctime_ns, info.st_mtime_ns) < self.started_ns - SETTLE_NS:
            self.fresh[path] = (stat_key(info), mode, oid)

    def save(self) -> None:
        """Replace the cache file with this snapshot's entries; a failure only costs speed."""
        if self.folder is None or self.fresh == self.entries:
            return
        with contextlib.suppress(OSError):
            self.folder.mkdir(parents=True, exist_ok=True)
            body = json.dumps({"identity": self.identity, "entries": self.fresh})
            fd, tmp = tempfile.mkstemp(prefix="blobs-", dir=self.folder)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(body)
                os.replace(tmp, self.folder / CACHE_NAME)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)

    def clear(self) -> None:
        """Forget every entry (a cached blob the store no longer has)."""
        self.entries.clear()
        self.fresh.clear()
        if self.folder is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.folder / CACHE_NAME)
