"""Per-command control groups: a pids and a memory cap, where this user may make one (v1 or v2)."""

from __future__ import annotations

import contextlib
import errno
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

STALE_SECONDS = 60.0
"""An empty `frogdesk-*` group older than this is a crash's leftover and is removed."""
PREFIX = "frogdesk-"


@dataclass(frozen=True)
class Hierarchy:
    """Where one controller is mounted and where this process sits in it."""

    version: int
    """1 (one hierarchy per controller) or 2 (the unified one)."""
    mount: Path
    own: Path
    """This process's own group, as a folder under the mount."""


def _mounts() -> list[tuple[str, Path, str, set[str]]]:
    """(fstype, mount point, root inside the hierarchy, super options) of every cgroup mount."""
    out: list[tuple[str, Path, str, set[str]]] = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) < 5 or len(rest) < 3 or rest[0] not in ("cgroup", "cgroup2"):
            continue
        out.append((rest[0], Path(fields[4]), fields[3], set(rest[2].split(","))))
    return out


def _own_paths() -> dict[str, str]:
    """controller -> this process's group path ("" names the v2 hierarchy)."""
    paths: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(",") if parts[1] else [""]:
                paths[controller] = parts[2]
    return paths


def _under(mount: Path, root: str, path: str) -> Path | None:
    """The folder of `path` (as /proc/self/cgroup says it) under a mount of `root`."""
    if root != "/" and path != root and not path.startswith(root.rstrip("/") + "/"):
        return None
    rel = path[len(root) :] if root != "/" else path
    folder = mount / rel.lstrip("/")
    return folder if folder.is_dir() else None


def hierarchy(controller: str) -> Hierarchy | None:
    """The v1 hierarchy of `controller`, else the v2 one if it offers it; None when neither."""
    own = _own_paths()
    mounts = _mounts()
    for fstype, mount, root, options in mounts:
        if fstype == "cgroup" and controller in options and controller in own:
            folder = _under(mount, root, own[controller])
            if folder is not None:
                return Hierarchy(1, mount, folder)
    for fstype, mount, root, _ in mounts:
        if fstype == "cgroup2" and "" in own:
            folder = _under(mount, root, own[""])
            if folder is not None and controller in _words(mount / "cgroup.controllers"):
                return Hierarchy(2, mount, folder)
    return None


def _words(path: Path) -> set[str]:
    try:
        return set(path.read_text().split())
    except OSError:
        return set()


def _parent_for(h: Hierarchy, controller: str) -> Path | None:
    """A group this user may make children in that hand `controller` down to them.

    v1: our own group. v2: the nearest group from ours upward that delegates the controller
    to its children and is ours to write (a systemd user session's app.slice): our own is
    a leaf with processes in it, which v2 does not let hand controllers down.
    """
    if h.version == 1:
        return h.own if os.access(h.own, os.W_OK) else None
    folder = h.own
    while folder != h.mount.parent and folder.is_relative_to(h.mount):
        if controller in _words(folder / "cgroup.subtree_control") and os.access(folder, os.W_OK):
            return folder
        folder = folder.parent
    return None


def _clear_stale(parent: Path) -> None:
    """Remove empty groups a killed FrogDesk left behind (a busy one refuses rmdir)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            if entry.name.startswith(PREFIX) and entry.is_dir(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    if time.time() - entry.stat(follow_symlinks=False).st_mtime > STALE_SECONDS:
                        os.rmdir(entry.path)


@dataclass(frozen=True)
class Group:
    """One command's group in one hierarchy: its folder and the files that matter."""

    version: int
    path: Path

    @property
    def procs(self) -> Path:
        """The file a process writes its pid into to join."""
        return self.path / "cgroup.procs"

    def pids(self) -> list[int]:
        """The processes in the group now."""
        try:
            return [int(p) for p in self.procs.read_text().split()]
        except (OSError, ValueError):
            return []

    def counter(self, name: str, key: str) -> int:
        """A `key N` line of an events-style file (pids.events, memory.events), 0 when absent."""
        try:
            for line in (self.path / name).read_text().splitlines():
                words = line.split()
                if len(words) == 2 and words[0] == key:
                    return int(words[1])
        except (OSError, ValueError):
            pass
        return 0

    def remove(self) -> None:
        """rmdir the group once its last process is gone (a dying one can take a moment)."""
        for _ in range(100):
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError as exc:
                if exc.errno != errno.EBUSY:
                    return
            time.sleep(0.01)


def make_group(controller: str, limits: dict[int, dict[str, int]]) -> tuple[Group | None, str]:
    """A fresh group of `controller` with its limit files (by cgroup version) written; or None and why not."""
    h = hierarchy(controller)
    if h is None:
        return None, f"no {controller} cgroup controller is mounted for this process"
    parent = _parent_for(h, controller)
    if parent is None:
        return None, f"the {controller} cgroup {h.own} is not writable by this user"
    _clear_stale(parent)
    group = Group(h.version, parent / f"{PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        group.path.mkdir()
    except OSError as exc:
        return None, f"cannot make a {controller} cgroup under {parent}: {exc.strerror}"
    for name, value in limits[h.version].items():
        try:
            (group.path / name).write_text(str(value))
        except OSError as exc:
            group.remove()
            return None, f"cannot set {name} in {group.path}: {exc.strerror}"
    return group, f"cgroup v{h.version} {controller} ({group.path})"


def join(procs_files: list[str]) -> None:
    """Move this process into each group (its children follow); OSError if one refuses."""
    for procs in procs_files:
        with open(procs, "w") as fh:
            fh.write(str(os.getpid()))
