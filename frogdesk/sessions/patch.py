"""The session's output patch: the worktree against its base commit, untracked files included."""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path


class PatchError(RuntimeError):
    """git could not diff the worktree; the message carries git's own words."""


@dataclass(frozen=True)
class WorktreeDiff:
    """The patch text (as `git apply` takes it) and the paths it touches."""

    patch: str
    files: list[str]


def _git(worktree: Path, env: dict[str, str], *args: str) -> str:
    proc = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0", *args],
        cwd=worktree,
        env=env,
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        raise PatchError(f"git {args[0]} failed: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout.decode("utf-8", errors="replace")


def worktree_diff(worktree: Path, base_commit: str) -> WorktreeDiff:
    """Diff everything in the worktree (tracked or new, not ignored) against `base_commit`.

    A throwaway index is used, so the worktree's own index is left as it was.
    """
    with tempfile.TemporaryDirectory(prefix="frogdesk-diff-") as tmp:
        env = dict(os.environ)
        env["GIT_INDEX_FILE"] = str(Path(tmp) / "index")
        env["GIT_TERMINAL_PROMPT"] = "0"
        _git(worktree, env, "read-tree", base_commit)
        _git(worktree, env, "add", "--all", "--", ".")
        patch = _git(
            worktree,
            env,
            "diff",
            "--cached",
            "--binary",
            "--no-color",
            "--no-ext-diff",
            base_commit,
        )
        names = _git(worktree, env, "diff", "--cached", "--name-only", "--no-color", base_commit)
    return WorktreeDiff(patch, [n for n in names.splitlines() if n])
