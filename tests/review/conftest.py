"""Fixtures for review tests: a real user repository and session worktrees made by the sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk.worktree.checkout import Worktree, create_worktree
from tests.support.review_helpers import MakeSession, git


@pytest.fixture
def user_repo(tmp_path: Path) -> Path:
    """A repository with a few committed files and one uncommitted edit."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_bytes(b"".join(b"line %d\n" % i for i in range(1, 41)))
    (repo / "b.txt").write_bytes(b"alpha\nbeta\ngamma\n")
    (repo / "src").mkdir()
    (repo / "src" / "m.py").write_bytes(b"def f():\n    return 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    return repo


@pytest.fixture
def make_session(tmp_path: Path) -> MakeSession:
    """Create a session worktree of a repository with the sandbox's own worktree code."""
    counter = iter(range(1000))

    def make(repo: Path) -> Worktree:
        return create_worktree(repo, tmp_path / "worktrees", f"s{next(counter)}")

    return make
