"""Committing exactly the applied files, leaving everything else the user staged alone."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Sequence
from pathlib import Path

from frogdesk.review.gitcmd import GitError, git_out, run_git


def commit_paths(repo_root: Path, paths: Sequence[str], message: str) -> str:
    """Commit the working-tree state of paths on top of HEAD and return the new commit id.

    The commit is built in a temporary index from HEAD, so other staged changes stay
    staged and uncommitted; afterwards the real index entries of paths match the commit.
    """
    head_proc = run_git(repo_root, ["rev-parse", "--verify", "-q", "HEAD"], ok_codes=(0, 1))
    head = head_proc.stdout.decode().strip() if head_proc.returncode == 0 else ""
    with tempfile.TemporaryDirectory(prefix="frogdesk-commit-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        if head:
            git_out(repo_root, ["read-tree", head], env=env)
        git_out(repo_root, ["add", "-A", "--", *paths], env=env, neutral=False)
        tree = git_out(repo_root, ["write-tree"], env=env).decode().strip()
    parents = ["-p", head] if head else []
    commit = git_out(repo_root, ["commit-tree", tree, *parents, "-m", message]).decode().strip()
    update = ["update-ref", "-m", "frogdesk apply", "HEAD", commit]
    if head:
        update.append(head)
    git_out(repo_root, update)
    # The commit exists either way; a stale index entry would only show in `git status`.
    with contextlib.suppress(GitError):
        git_out(repo_root, ["reset", "-q", "--", *paths])
    return commit
