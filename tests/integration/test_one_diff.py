"""The session's output patch and the review's diff come from one snapshot and agree."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from frogdesk.review.diff import compute_diff, patch_text
from frogdesk.sessions.errors import PatchError
from frogdesk.sessions.patch import worktree_diff
from frogdesk.worktree.checkout import create_worktree, discard_worktree
from tests.support.scripted import git, make_repo


def _check_applies(repo: Path, patch: str) -> None:
    done = subprocess.run(
        ["git", "apply", "--check", "-"], cwd=repo, input=patch.encode(), capture_output=True
    )
    assert done.returncode == 0, done.stderr.decode()


def test_patch_and_review_agree_on_every_kind_of_change(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "old name.txt").write_text("".join(f"line {i}\n" for i in range(40)))
    (repo / "gone.txt").write_text("bye\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "more")
    wt = create_worktree(repo, tmp_path / "worktrees", "s1")
    try:
        (wt.path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
        (wt.path / "old name.txt").rename(wt.path / "new name.txt")
        (wt.path / "gone.txt").unlink()
        (wt.path / "blob.bin").write_bytes(bytes(range(256)) * 4)
        (wt.path / "ünïcode.md").write_text("hi\n")
        diff = worktree_diff(wt.path, wt.base_commit)
        review = compute_diff(wt.path, wt.base_commit)
        assert sorted(diff.files) == sorted(c.path for c in review.files)
        assert sorted(diff.files) == sorted(
            ["calc.py", "new name.txt", "gone.txt", "blob.bin", "ünïcode.md"]
        )
        assert "rename from old name.txt" in diff.patch
        assert "GIT binary patch" in diff.patch
        assert (diff.patch, diff.files) == patch_text(wt.path, wt.base_commit)
        _check_applies(repo, diff.patch)
        # the worktree's own index is left alone: nothing was staged there
        assert git(wt.path, "diff", "--cached", "--name-only") == ""
    finally:
        discard_worktree(wt)


def test_no_change_gives_an_empty_patch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    wt = create_worktree(repo, tmp_path / "worktrees", "s2")
    try:
        diff = worktree_diff(wt.path, wt.base_commit)
        assert diff.patch == "" and diff.files == []
    finally:
        discard_worktree(wt)


def test_a_bad_base_commit_is_a_patch_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    wt = create_worktree(repo, tmp_path / "worktrees", "s3")
    try:
        with pytest.raises(PatchError, match="git"):
            worktree_diff(wt.path, "0" * 40)
    finally:
        discard_worktree(wt)
