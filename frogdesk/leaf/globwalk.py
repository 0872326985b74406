"""A fast glob for the Glob tool: Python's glob semantics on os.scandir, pruned and confined."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fnmatch import translate

from frogdesk.leaf.paths import is_within

_MAGIC = re.compile(r"[*?[]")
PRUNED_NAMES = frozenset({".git"})
"""Directory names the walker never enters, whatever the pattern says."""


def has_magic(part: str) -> bool:
    """True when a pattern component contains a glob wildcard."""
    return _MAGIC.search(part) is not None


@dataclass
class _Walk:
    """One glob evaluation: the real root it is confined to and the symlinked dirs on the stack."""

    real_root: str
    on_stack: set[str] = field(default_factory=set)
    listings: dict[str, list[os.DirEntry[str]]] = field(default_factory=dict)
    matchers: dict[str, Callable[[str], re.Match[str] | None]] = field(default_factory=dict)

    def matcher(self, part: str) -> Callable[[str], re.Match[str] | None]:
        found = self.matchers.get(part)
        if found is None:
            found = re.compile(translate(part)).match
            self.matchers[part] = found
        return found

    def allowed(self, entry: os.DirEntry[str]) -> bool:
        """Entries that are symlinks must point inside the root (and not loop)."""
        if not entry.is_symlink():
            return True
        return is_within(os.path.realpath(entry.path), self.real_root)

    def entries(self, directory: str) -> list[os.DirEntry[str]]:
        """The directory's entries (minus pruned names), listed once per evaluation."""
        found = self.listings.get(directory)
        if found is None:
            try:
                with os.scandir(directory) as it:
                    found = [e for e in it if e.name not in PRUNED_NAMES]
            except OSError:
                found = []
            self.listings[directory] = found
        return found

    def is_dir(self, entry: os.DirEntry[str]) -> bool:
        try:
            return entry.is_dir() and self.allowed(entry)
        except OSError:
            return False

    def is_file(self, entry: os.DirEntry[str]) -> bool:
        try:
            return entry.is_file() and self.allowed(entry)
        except OSError:
            return False

    def descend(self, directory: str, rel: str) -> Iterator[tuple[str, str]]:
        """(absolute, relative) for every non-hidden directory below `directory`, itself first."""
        yield directory, rel
        for entry in self.entries(directory):
            if entry.name.startswith(".") or not self.is_dir(entry):
                continue
            key = os.path.realpath(entry.path) if entry.is_symlink() else ""
            if key and key in self.on_stack:
                continue  # a symlink loop
            if key:
                self.on_stack.add(key)
            yield from self.descend(entry.path, rel + entry.name + "/")
            if key:
                self.on_stack.discard(key)

    def files_below(self, directory: str, rel: str) -> Iterator[str]:
        """Every non-hidden file below `directory` (what a trailing `**` matches)."""
        for path, prefix in self.descend(directory, rel):
            for entry in self.entries(path):
                if not entry.name.startswith(".") and self.is_file(entry):
                    yield prefix + entry.name

    def match(self, directory: str, rel: str, parts: list[str], i: int) -> Iterator[str]:
        """Files matching parts[i:] inside `directory`, as paths relative to the search root."""
        part = parts[i]
        last = i == len(parts) - 1
        if part == "**":
            if last:
                yield from self.files_below(directory, rel)
                return
            for path, prefix in self.descend(directory, rel):
                yield from self.match(path, prefix, parts, i + 1)
            return
        if not has_magic(part):
            if part in PRUNED_NAMES:
                return
            path = os.path.join(directory, part)
            if last:
                if os.path.isfile(path) and is_within(os.path.realpath(path), self.real_root):
                    yield rel + part
            elif os.path.isdir(path) and is_within(os.path.realpath(path), self.real_root):
                yield from self.match(path, rel + part + "/", parts, i + 1)
            return
        hidden_ok = part.startswith(".")
        matches = self.matcher(part)
        for entry in self.entries(directory):
            name = entry.name
            if (not hidden_ok and name.startswith(".")) or matches(name) is None:
                continue
            if last:
                if self.is_file(entry):
                    yield rel + name
            elif self.is_dir(entry):
                yield from self.match(entry.path, rel + name + "/", parts, i + 1)


def glob_files(base: str, pattern: str, confine_to: str) -> list[str]:
    """Files under `base` matching a relative `pattern`, sorted, relative to `base`.

    Same answer as `glob.glob(pattern, root_dir=base, recursive=True)` filtered to files,
    except that `.git` directories are never entered and symlinks leading outside
    `confine_to` are neither followed nor listed.
    """
    if not pattern or pattern.endswith("/"):
        return []
    parts = [p for p in pattern.split("/") if p]
    if not parts:
        return []
    walk = _Walk(os.path.realpath(confine_to))
    return sorted(set(walk.match(base, "", parts, 0)))
