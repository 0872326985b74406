"""A fast glob for the Glob tool: Python's glob semantics on os.scandir, pruned, confined, bounded.

The walk works on descriptors beneath the workdir: every folder is opened from the workdir
by its physical path with no link followed (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS),
and links are resolved by `paths.locate`, so a folder swapped for a link while Glob runs
lists nothing outside (DESIGN.md invariant 10).
"""

from __future__ import annotations

import os
import re
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import translate
from pathlib import Path

from frogdesk.beneath import DIR_FLAGS, open_beneath
from frogdesk.leaf.errors import OutsideWorkdirError
from frogdesk.leaf.paths import WorkRoot, is_within, locate, opened_root

_MAGIC = re.compile(r"[*?[]")
PRUNED_NAMES = frozenset({".git"})
"""Directory names the walker never enters, whatever the pattern says."""
GLOB_BUDGET = 2_000_000
"""Units of work (directory entries looked at, folders visited) one Glob may spend.

An ordinary tree costs about two units per entry, so this covers repositories of
hundreds of thousands of files; what exceeds it is a tree of symlinked folders whose
every path is a distinct answer (n folders linking each other have about n! of them).
"""


def has_magic(part: str) -> bool:
    """True when a pattern component contains a glob wildcard."""
    return _MAGIC.search(part) is not None


def pattern_parts(pattern: str) -> list[str]:
    """The pattern's components, a run of `**` as one (`**/**` matches what `**` does)."""
    parts: list[str] = []
    for part in pattern.split("/"):
        if part and not (part == "**" and parts and parts[-1] == "**"):
            parts.append(part)
    return parts


class GlobStopped(Exception):
    """The walk ran out of budget or was cancelled; what it found so far is kept."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class GlobResult:
    """The files found, sorted, and why the walk stopped early (None when it finished)."""

    files: list[str]
    stopped: str | None = None


_Visit = tuple[str, str, int, str]
"""(real, rel, index, key): match parts[index:] in the directory `real`, shown as `rel`.

`real` is the folder's physical path below the workdir, `/`-prefixed (`/` is the workdir):
no link in it, so it is opened with none followed.

`key` is set when the directory is a symlinked one entered by `**`: it is held as an
ancestor until its subtree is done, so a link back to it is a loop, not a descent. An
index of -1 marks the end of that subtree instead (the key is released).
"""


@dataclass(frozen=True)
class _Entry:
    """A directory entry classified once: a file, or a folder (with its real path), or neither."""

    name: str
    is_file: bool
    folder: str
    """The physical path (as `real`) when the entry is a folder the walk may enter, else ""."""
    is_link: bool


def _physical(located_path: str) -> str:
    return "/" + located_path


@dataclass
class _Walk:
    """One glob evaluation: the workdir it is confined to, its work counted against a budget."""

    root: WorkRoot
    parts: list[str]
    budget: int
    cancel: threading.Event | None
    found: set[str] = field(default_factory=set)
    work: int = 0
    on_stack: set[str] = field(default_factory=set)
    seen: set[tuple[str, int]] = field(default_factory=set)
    listings: dict[str, list[_Entry]] = field(default_factory=dict)
    lookups: dict[tuple[str, str], tuple[bool, str]] = field(default_factory=dict)
    matchers: dict[str, Callable[[str], re.Match[str] | None]] = field(default_factory=dict)

    def spend(self, units: int) -> None:
        """Count work; stop the walk past the budget or once cancelled."""
        self.work += units
        if self.work > self.budget:
            raise GlobStopped(f"after looking at {self.budget:,} directory entries")
        if self.cancel is not None and self.cancel.is_set():
            raise GlobStopped("because the run was stopped")

    def matcher(self, part: str) -> Callable[[str], re.Match[str] | None]:
        found = self.matchers.get(part)
        if found is None:
            found = re.compile(translate(part)).match
            self.matchers[part] = found
        return found

    def follow(self, directory: str, name: str) -> tuple[bool, str]:
        """(is a file, physical path if a folder) of `name` in a folder, links inside
        followed beneath the workdir; a link leading out is neither."""
        try:
            located = locate(self.root, f"{directory}/{name}".lstrip("/"), name)
        except OSError:  # out of the workdir, a loop, gone: not listed
            return (False, "")
        os.close(located.parent)
        mode = located.mode
        if mode is None:
            return (False, "")
        if stat.S_ISDIR(mode):
            return (False, _physical(located.physical))
        return (stat.S_ISREG(mode), "")

    def _classify(self, directory: str, entry: os.DirEntry[str]) -> _Entry:
        try:
            if entry.is_symlink():
                is_file, folder = self.follow(directory, entry.name)
                return _Entry(entry.name, is_file, folder, True)
            folder = f"{directory.rstrip('/')}/{entry.name}"
            is_dir = entry.is_dir(follow_symlinks=False)
            return _Entry(
                entry.name, entry.is_file(follow_symlinks=False), folder if is_dir else "", False
            )
        except OSError:
            return _Entry(entry.name, False, "", False)

    def entries(self, directory: str) -> list[_Entry]:
        """The folder's entries (minus pruned names), listed once per evaluation."""
        found = self.listings.get(directory)
        if found is None:
            try:
                fd = open_beneath(
                    self.root.fd, directory.lstrip("/"), DIR_FLAGS, follow_links=False
                )
            except OSError:  # gone, or a link now: nothing listed through it
                found = []
            else:
                try:
                    with os.scandir(fd) as it:
                        found = [
                            self._classify(directory, e) for e in it if e.name not in PRUNED_NAMES
                        ]
                except OSError:
                    found = []
                finally:
                    os.close(fd)
                # In name order, so a walk stopped early has found the same files every time.
                found.sort(key=lambda e: e.name)
            self.listings[directory] = found
        return found

    def lookup(self, directory: str, name: str) -> tuple[bool, str]:
        """(is a file, physical path if a folder) for a literal name, confined like an entry."""
        key = (directory, name)
        found = self.lookups.get(key)
        if found is None:
            found = self.follow(directory, name)
            self.lookups[key] = found
        return found

    def run(self, base: str) -> None:
        """Match every part from the physical folder `base`; depth-first with an explicit stack (deep trees are fine)."""
        stack: list[_Visit] = [(base, "", 0, "")]
        while stack:
            real, rel, index, key = stack.pop()
            if index < 0:
                self.on_stack.discard(key)
                continue
            if key in self.on_stack:
                continue  # a symlink loop
            # The same folder at the same pattern position has the same answer, however
            # the pattern got there: without this, `*/**/*/**/x` re-walks every split of
            # a deep path between its two `**`.
            if (rel, index) in self.seen:
                continue
            self.seen.add((rel, index))
            if key:
                self.on_stack.add(key)
                stack.append((real, rel, -1, key))
            self.step(real, rel, index, stack)

    def step(self, real: str, rel: str, index: int, stack: list[_Visit]) -> None:
        """Match parts[index] in a directory: record the files, queue the folders to visit."""
        part = self.parts[index]
        last = index == len(self.parts) - 1
        if not has_magic(part):
            self.spend(1)
            if part in PRUNED_NAMES:
                return
            is_file, folder = self.lookup(real, part)
            if last and is_file:
                self.found.add(rel + part)
            elif not last and folder:
                stack.append((folder, rel + part + "/", index + 1, ""))
            return
        entries = self.entries(real)
        self.spend(1 + len(entries))
        # Folders are pushed last to first so that they are walked in name order.
        if part == "**":
            for entry in reversed(entries):
                if entry.name.startswith("."):
                    continue
                if last and entry.is_file:
                    self.found.add(rel + entry.name)
                elif entry.folder:
                    link_key = entry.folder if entry.is_link else ""
                    stack.append((entry.folder, rel + entry.name + "/", index, link_key))
            if not last:  # `**` spanning no directory, matched before going deeper
                stack.append((real, rel, index + 1, ""))
            return
        hidden_ok = part.startswith(".")
        matches = self.matcher(part)
        for entry in reversed(entries):
            if (not hidden_ok and entry.name.startswith(".")) or matches(entry.name) is None:
                continue
            if last:
                if entry.is_file:
                    self.found.add(rel + entry.name)
            elif entry.folder:
                stack.append((entry.folder, rel + entry.name + "/", index + 1, ""))


def glob_beneath(
    root: WorkRoot,
    base: str,
    pattern: str,
    raw: str,
    *,
    budget: int = GLOB_BUDGET,
    cancel: threading.Event | None = None,
) -> GlobResult:
    """Files under `base` (a path below the workdir, links inside followed) matching a
    relative `pattern`, sorted, relative to `base`.

    Same answer as `glob.glob(pattern, root_dir=base, recursive=True)` filtered to files
    and without repeats, except that `.git` directories are never entered and links
    leading outside the workdir are neither followed nor listed (a `base` that leads out
    is refused: OutsideWorkdirError naming `raw`). A walk that spends `budget` units of
    work, or sees `cancel` set, stops with what it found so far.
    """
    if not pattern or pattern.endswith("/"):
        return GlobResult([])
    parts = pattern_parts(pattern)
    if not parts:
        return GlobResult([])
    try:
        located = locate(root, base, raw)
    except OutsideWorkdirError:
        raise
    except OSError:
        return GlobResult([])  # no such folder: nothing matches, as glob.glob says
    os.close(located.parent)
    if located.mode is None or not stat.S_ISDIR(located.mode):
        return GlobResult([])
    walk = _Walk(root, parts, budget, cancel)
    try:
        walk.run(_physical(located.physical))
    except GlobStopped as stop:
        return GlobResult(sorted(walk.found), stop.reason)
    return GlobResult(sorted(walk.found))


def glob_walk(
    base: str,
    pattern: str,
    confine_to: str,
    *,
    budget: int = GLOB_BUDGET,
    cancel: threading.Event | None = None,
) -> GlobResult:
    """glob_beneath of the folder `base` inside `confine_to` (both paths; a `base` that is
    not inside `confine_to` by name, or leads out, matches nothing)."""
    rel = os.path.relpath(os.path.abspath(base), os.path.abspath(confine_to))
    if rel == ".." or rel.startswith("../"):
        real_base, real_root = os.path.realpath(base), os.path.realpath(confine_to)
        if not is_within(real_base, real_root):
            return GlobResult([])
        rel = os.path.relpath(real_base, real_root)
    with opened_root(Path(confine_to)) as root:
        try:
            return glob_beneath(
                root, "" if rel == "." else rel, pattern, base, budget=budget, cancel=cancel
            )
        except OutsideWorkdirError:
            return GlobResult([])


def glob_files(base: str, pattern: str, confine_to: str) -> list[str]:
    """The files of `glob_walk` with the default budget (a stopped walk's are partial)."""
    return glob_walk(base, pattern, confine_to).files
