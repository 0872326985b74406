"""Helpers for review tests: git with a fixed identity, and a fingerprint of a repository."""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from frogdesk.worktree.checkout import Worktree


def git(cwd: Path, *args: str) -> str:
    """Run git with a fixed identity and return stdout."""
    env = dict(os.environ)
    env.update(
        GIT_AUTHOR_NAME="T",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="T",
        GIT_COMMITTER_EMAIL="t@example.invalid",
    )
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


def repo_fingerprint(repo: Path) -> dict[str, str]:
    """Every file of the tree and .git's index and refs, hashed (objects excluded: they only grow)."""
    out: dict[str, str] = {}
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo).as_posix()
        if rel.startswith(".git/") and not (
            rel in (".git/index", ".git/HEAD", ".git/packed-refs") or rel.startswith(".git/refs/")
        ):
            continue
        if path.is_symlink():
            out[rel] = "link:" + os.readlink(path)
        elif path.is_file():
            mode = oct(path.stat().st_mode & 0o777)
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest() + mode
        elif path.is_dir():
            out[rel] = "dir"
    out["<refs>"] = git(repo, "for-each-ref")
    return out


MakeSession = Callable[[Path], Worktree]
"""Creates a session worktree of a repository."""
