"""A same-size edit made in the second the index was written still shows up in the diff."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from frogdesk.review.diff import compute_diff
from frogdesk.sandbox.worktree import snapshot_commit


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def start_of_next_second() -> None:
    time.sleep(1 - time.time() % 1 + 0.01)


def make_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "calc.py").write_text("x = a - b\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    return repo


def test_review_diff_sees_racy_same_size_edit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    base = git(repo, "rev-parse", "HEAD").strip()
    worktree = tmp_path / "wt"
    start_of_next_second()
    git(repo, "worktree", "add", "-q", "--detach", str(worktree), base)  # writes its index now
    (worktree / "calc.py").write_text("x = a + b\n")  # same size, same second
    start_of_next_second()
    diff = compute_diff(worktree, base)
    assert [f.path for f in diff.files] == ["calc.py"]


def test_snapshot_sees_racy_same_size_edit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    start_of_next_second()
    git(repo, "update-index", "--really-refresh")
    git(repo, "read-tree", "HEAD")  # rewrites the user's index now
    (repo / "calc.py").write_text("x = a + b\n")
    start_of_next_second()
    commit = snapshot_commit(repo)
    assert git(repo, "show", f"{commit}:calc.py") == "x = a + b\n"
