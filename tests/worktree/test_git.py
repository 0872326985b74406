"""The one git runner: explicit recorded paths, a hardened configuration, a cleaned environment."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from frogdesk.worktree.checkout import Worktree, discard_worktree, load_worktree
from frogdesk.worktree.errors import TamperedWorktree
from frogdesk.worktree.git import git_out, run_git
from frogdesk.worktree.record import WORKTREE_CONFIG, recorded_paths, tampering
from tests.support.gitutil import git


def _marker_hook(folder: Path, marker: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    hook = folder / "post-index-change"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    return folder


def test_worktree_git_runs_on_the_recorded_paths(worktree: Worktree) -> None:
    pinned = recorded_paths(worktree.path)
    assert pinned is not None
    assert (pinned.git_dir, pinned.common_dir) == (worktree.git_dir, worktree.common_dir)
    shown = git_out(worktree.path, ["rev-parse", "--absolute-git-dir", "--git-common-dir"])
    assert shown.decode().splitlines() == [str(worktree.git_dir), str(worktree.common_dir)]


@pytest.mark.parametrize("pointer", [".git", "gitdir", "commondir", WORKTREE_CONFIG])
def test_a_changed_pointer_is_refused_in_one_line(
    worktree: Worktree, pointer: str, tmp_path: Path
) -> None:
    path = worktree.path / ".git" if pointer == ".git" else worktree.git_dir / pointer
    assert tampering(worktree) is None
    assert git_out(worktree.path, ["status", "--porcelain"]) == b""  # positive control
    path.write_text(f"gitdir: {tmp_path}\n" if pointer == ".git" else f"{tmp_path}\n")
    assert tampering(worktree) is not None
    with pytest.raises(TamperedWorktree) as caught:
        run_git(worktree.path, ["status"])
    assert "\n" not in str(caught.value) and "tampered with" in str(caught.value)
    with pytest.raises(TamperedWorktree):
        load_worktree(worktree.path.parent, worktree.name)
    discard_worktree(worktree)  # a tampered session can still be thrown away
    assert not worktree.path.exists() and not worktree.git_dir.exists()


def test_the_callers_environment_never_redirects_git(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    # Positive control: plain git with these variables looks at the other repository.
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    plain = subprocess.run(
        ["git", "rev-parse", "--absolute-git-dir"], cwd=repo, capture_output=True, text=True
    )
    assert plain.stdout.strip() == str(other / ".git")
    head = git_out(repo, ["rev-parse", "--absolute-git-dir"]).decode().strip()
    assert head == str((repo / ".git").resolve())


def test_hooks_and_fsmonitor_never_run(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    hooks = _marker_hook(tmp_path / "hooks", marker)
    monitor = tmp_path / "fsmonitor.sh"
    monitor.write_text(f"#!/bin/sh\ntouch {marker}.fsmonitor\n")
    monitor.chmod(0o755)
    git(repo, "config", "core.hooksPath", str(hooks))
    git(repo, "config", "core.fsmonitor", str(monitor))
    (repo / "new.txt").write_text("x\n")
    monitored = Path(f"{marker}.fsmonitor")
    git(repo, "add", "new.txt")  # positive control: the user's own git runs both
    assert marker.exists() and monitored.exists()
    marker.unlink()
    monitored.unlink()
    (repo / "new2.txt").write_text("y\n")
    git_out(repo, ["add", "new2.txt"])
    git_out(repo, ["status", "--porcelain"])
    assert not marker.exists() and not monitored.exists()
