"""Reading blobs for review through FrogDesk's one hardened git runner."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from frogdesk.worktree.git import GitError, GitPaths, git_out, run_git

__all__ = ["GitError", "git_out", "read_blobs", "run_git"]


def read_blobs(cwd: Path | GitPaths, shas: Sequence[str]) -> dict[str, bytes]:
    """The contents of the given blobs, read with one `git cat-file --batch`."""
    wanted = list(dict.fromkeys(shas))
    if not wanted:
        return {}
    out = run_git(
        cwd, ["cat-file", "--batch"], stdin="".join(f"{s}\n" for s in wanted).encode()
    ).stdout
    blobs: dict[str, bytes] = {}
    pos = 0
    for sha in wanted:
        eol = out.index(b"\n", pos)
        header = out[pos:eol].split(b" ")
        if len(header) != 3:
            raise GitError(f"git cat-file: object {sha} is missing")
        size = int(header[2])
        start = eol + 1
        blobs[sha] = out[start : start + size]
        pos = start + size + 1
    return blobs
