"""Resolving the model's paths inside the session worktree, refusing anything that leads out."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath


class OutsideWorkdirError(PermissionError):
    """A path that would reach outside the repository workdir."""


@dataclass(frozen=True)
class ResolvedPath:
    """A path the tools may touch: its real location and the name the model is shown."""

    path: Path
    """Absolute path inside the workdir (symlinks inside the workdir kept as given)."""
    display: str
    """The path relative to the workdir, with `/` separators (`.` for the workdir itself)."""


def is_within(path: str, root: str) -> bool:
    """True when the real path `path` is `root` or below it (both already made real)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def resolve(workdir: Path, raw: str) -> ResolvedPath:
    """Resolve `raw` against the workdir; raise OutsideWorkdirError when it escapes.

    Relative paths resolve against the workdir; absolute paths are accepted only inside
    it; `..` may not climb above it; a symlink (file or directory, at any depth) whose
    target lies outside the workdir is refused.
    """
    if not raw:
        raise ValueError("path is empty")
    if "\x00" in raw:
        raise ValueError("path contains a NUL character")
    root = os.path.abspath(workdir)
    real_root = os.path.realpath(root)
    candidate = raw if os.path.isabs(raw) else os.path.join(root, raw)
    lexical = os.path.normpath(candidate)
    if not is_within(lexical, root) and not is_within(lexical, real_root):
        raise OutsideWorkdirError(f"{raw} is outside the repository workdir")
    if not is_within(os.path.realpath(lexical), real_root):
        raise OutsideWorkdirError(f"{raw} leads outside the repository workdir through a symlink")
    base = root if is_within(lexical, root) else real_root
    rel = os.path.relpath(lexical, base)
    display = PurePosixPath(*Path(rel).parts).as_posix() if rel != "." else "."
    return ResolvedPath(Path(lexical), display)


def in_git_dir(workdir: Path, resolved: ResolvedPath) -> bool:
    """True for a `.git` entry (any case, at any depth) or anything below one, by the name
    the model gave or by where its symlinks lead: `notes.txt -> .git` is the worktree's
    `.git` file too, and writing it would point the worktree at another repository."""
    real_root = os.path.realpath(workdir)
    real = os.path.relpath(os.path.realpath(resolved.path), real_root)
    names = (*PurePosixPath(resolved.display).parts, *Path(real).parts)
    return any(name.lower() == ".git" for name in names)
