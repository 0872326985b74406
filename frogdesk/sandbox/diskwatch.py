"""What a session holds on disk and how close each writable file system is to full."""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from frogdesk.sizes import human_bytes

BASELINE_FILE = "disk-baseline"
"""In the session's private folder (never writable by its commands): bytes held at its first command."""


def held_bytes(roots: Iterable[Path]) -> int:
    """Bytes of disk the files under roots take, each inode once, links never followed."""
    seen: set[tuple[int, int]] = set()
    total = 0
    stack = [str(r) for r in roots]
    while stack:
        path = stack.pop()
        try:
            st = os.lstat(path)
        except OSError:
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen:
            continue
        seen.add(key)
        total += st.st_blocks * 512
        if stat.S_ISDIR(st.st_mode):
            with contextlib.suppress(OSError), os.scandir(path) as entries:
                stack.extend(e.path for e in entries)
    return total


def baseline(private: Path, roots: Sequence[Path]) -> tuple[int, int]:
    """(bytes held at the session's first command, bytes held now); the first is kept on disk."""
    now = held_bytes(roots)
    record = private / BASELINE_FILE
    try:
        return int(record.read_text().strip()), now
    except (OSError, ValueError):
        pass
    with contextlib.suppress(OSError):
        record.write_text(f"{now}\n")
    return now, now


@dataclass(frozen=True)
class Fs:
    """One writable file system: a path on it, its mount, and its used bytes when the command started."""

    path: Path
    used0: int
    free0: int

    @property
    def mount(self) -> str:
        """The mount point that holds path, for messages."""
        path = self.path
        with contextlib.suppress(OSError):
            dev = os.stat(path).st_dev
            while path.parent != path and os.stat(path.parent).st_dev == dev:
                path = path.parent
        return str(path)


def usage(path: Path) -> tuple[int, int]:
    """(used, free for unprivileged writers) bytes of the file system holding path."""
    st = os.statvfs(path)
    return (st.f_blocks - st.f_bfree) * st.f_frsize, st.f_bavail * st.f_frsize


def file_systems(roots: Iterable[Path]) -> list[Fs]:
    """Each distinct file system of the roots once, with its usage now."""
    found: dict[int, Fs] = {}
    for root in roots:
        try:
            dev = os.stat(root).st_dev
            if dev not in found:
                used, free = usage(root)
                found[dev] = Fs(root, used, free)
        except OSError:
            continue
    return list(found.values())


SLACK = 1 << 20
"""Growth allowed past a limit before it counts: a command that only deletes files may still run."""


CONFIRM_SECONDS = 0.02
"""Least time between two walks of the session's folders to confirm the cap is reached."""


@dataclass
class DiskBudget:
    """A command's room on disk: the reserve on every file system, and the session's cap.

    Judged by how much each file system's use grew since the command started (statvfs,
    cheap enough to ask every few milliseconds), so a session at a limit can still run
    commands that delete files. Growth that would pass the cap is confirmed by walking
    the session's folders: other programs writing to the same disk are not the session's.
    """

    file_systems: list[Fs]
    reserve: int
    """Bytes that must stay free on each file system; 0 for none."""
    cap: int
    """Bytes the session may add to what it held at its first command; 0 for none."""
    held: int
    """Bytes the session had added when the command started."""
    roots: tuple[Path, ...] = ()
    """The session's folders, walked to confirm the cap."""
    start: int = 0
    """Bytes held under roots when the command started."""
    others: int = 0
    """Growth the last walk showed to be other programs' writes."""
    confirm_after: float = 0.0
    last: dict[int, int] = field(default_factory=dict)
    """Per file system (by index): how much it had grown at the last look."""

    def _room(self, fs: Fs) -> int:
        return max(fs.free0 - self.reserve, 0)

    def headroom(self) -> int | None:
        """Bytes the command may still write before a limit is reached; None when unlimited."""
        rooms = [self._room(fs) for fs in self.file_systems] if self.reserve else []
        if self.cap:
            rooms.append(max(self.cap - self.held, 0))
        return min(rooms) if rooms else None

    def _ahead(self, index: int, grown: int) -> int:
        """How much more the file system will have grown at the next look: as much as it
        grew since the last one (0 while it shrinks). A loop of small files, each under the
        per-file limit, writes megabytes between two looks on a fast disk, so the command
        is stopped one look early rather than one look late."""
        before = self.last.get(index)
        self.last[index] = grown
        return 0 if before is None else max(grown - before, 0)

    def breach(self, final: bool = False) -> str | None:
        """Why the command must stop now, in words; None while it is within both limits.

        `final`: the command has ended; the cap is then always confirmed by a walk.
        """
        total = 0
        for index, fs in enumerate(self.file_systems):
            try:
                used, _ = usage(fs.path)
            except OSError:
                continue
            grown = max(used - fs.used0, 0)
            total += grown
            ahead = self._ahead(index, grown)
            if final:  # an ended command writes no more: judged on what it wrote
                ahead = 0
            if self.reserve and grown + ahead > self._room(fs) + SLACK:
                return (
                    f"the file system of {fs.mount} is down to its reserve of "
                    f"{human_bytes(self.reserve)} free (sandbox_disk_reserve); delete files "
                    "to make room"
                )
        budget = max(self.cap - self.held, 0) + SLACK
        if self.cap and total - self.others > budget:
            now = time.monotonic()
            if not final and now < self.confirm_after:
                return None
            ours = held_bytes(self.roots) - self.start
            done = time.monotonic()
            # Walks take their time on a big worktree: never more than a fifth of the watcher's.
            self.confirm_after = done + max(CONFIRM_SECONDS, 4 * (done - now))
            self.others = max(total - ours, 0)
            if ours > budget:
                return (
                    f"the session's disk cap of {human_bytes(self.cap)} was reached "
                    "(session_disk_cap); delete files it no longer needs"
                )
        return None
