"""Attacks on the git metadata the sandbox can write: FrogDesk's own git must never follow it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.attacks.harness import bash, frogdesk, resume, run_attack
from tests.attacks.payloads import (
    PLANTS,
    evil_git_dir,
    plain_git_runs_payload,
    worktree_config_plant,
)
from tests.support.e2e import changed_paths, git, make_user_repo, repo_state

REFUSED_WRITE = ("Read-only file system", "Device or resource busy")
"""What bash says when it cannot replace a file mounted read-only."""


def _one_line_refusal(done_stderr: str) -> None:
    """FrogDesk said it refuses, in one line (its last), with no traceback."""
    lines = [line for line in done_stderr.splitlines() if line.strip()]
    assert [line for line in lines if "tampered with" in line] == lines[-1:], done_stderr
    assert "Traceback" not in done_stderr


def _folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _worktrees_dirs() -> list[Path]:
    """Every session worktree folder left in FrogDesk's data directory."""
    from frogdesk.paths import AppPaths

    folder = AppPaths.default().worktrees_dir
    return [p for p in folder.iterdir() if p.is_dir()] if folder.is_dir() else []


def _review(session_id: str) -> tuple[int, str, str]:
    done = frogdesk("review", session_id)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_planted_git_dir_never_runs_outside(
    plant: str, level: str, tmp_path: Path, outside: Path
) -> None:
    marker = outside / f"pwned-{plant}"
    payload = evil_git_dir(marker) + PLANTS[plant]
    assert plain_git_runs_payload(
        make_user_repo(_folder(tmp_path / "ctl")), tmp_path, payload, marker
    )

    repo = make_user_repo(tmp_path)
    before = repo_state(repo)
    command = f"echo control > control.txt; {payload}; echo PLANTED=$?"
    run = run_attack(repo, [bash(command)], tmp_path, level)
    observation = run.observations[0]
    assert "Exit code: 0" in observation or "PLANTED" in observation, observation
    code, out, err = _review(run.session_id)
    if level == "bwrap":
        # The pointer files are read-only inside; the worktree itself stays writable.
        assert any(words in observation for words in REFUSED_WRITE), observation
        assert code == 0, err
        assert "control.txt" in out
    else:
        # Landlock cannot protect them: FrogDesk notices and refuses to run git on the session.
        assert "PLANTED=0" in observation, observation
        assert run.done.returncode != 0
        _one_line_refusal(run.done.stderr)
        assert code != 0
        _one_line_refusal(err)
    assert not marker.exists()
    assert changed_paths(before, repo_state(repo)) == set()
    # Discarding works on a tampered session too, and removes its registration.
    assert frogdesk("sessions", "discard", run.session_id).returncode == 0
    assert not (repo / ".git" / "worktrees" / run.session_id).exists()
    assert not any(p.name == run.session_id for p in _worktrees_dirs())
    assert not marker.exists()


def test_worktree_config_filter_never_runs_outside(
    level: str, tmp_path: Path, outside: Path
) -> None:
    marker = outside / "pwned-config-worktree"
    payload = worktree_config_plant(marker)
    control = make_user_repo(_folder(tmp_path / "ctl"))
    git(control, "config", "extensions.worktreeConfig", "true")
    assert plain_git_runs_payload(control, tmp_path, payload, marker)

    repo = make_user_repo(tmp_path)
    git(repo, "config", "extensions.worktreeConfig", "true")
    before = repo_state(repo)
    run = run_attack(repo, [bash(f"{payload}; echo PLANTED=$?")], tmp_path, level)
    code, _, err = _review(run.session_id)
    if level == "bwrap":
        assert any(words in run.observations[0] for words in REFUSED_WRITE), run.observations
        assert code == 0, err
    else:
        assert "PLANTED=0" in run.observations[0], run.observations
        assert code != 0
        _one_line_refusal(err)
    assert not marker.exists()
    assert changed_paths(before, repo_state(repo)) == set()


@pytest.mark.parametrize("target", ["root", "user-git-dir"])
def test_resume_never_widens_the_sandbox(
    target: str, level: str, tmp_path: Path, outside: Path
) -> None:
    repo = make_user_repo(tmp_path)
    before = repo_state(repo)
    pointer = "/" if target == "root" else str(repo / ".git")
    hook = repo / ".git" / "hooks" / "post-commit"
    plant = f"echo control > control.txt; printf 'gitdir: {pointer}\\n' > .git; echo PLANTED=$?"
    escape = (
        f"echo resumed > resumed.txt; echo escaped > {outside}/widened; "
        f"printf '#!/bin/sh\\ntouch {outside}/hook-ran\\n' > {hook}; echo TRIED"
    )
    first = run_attack(repo, [bash(plant), bash(escape)], tmp_path, level, max_steps=1)
    again = resume(first.session_id, tmp_path)
    if level == "bwrap":
        assert any(words in first.observations[0] for words in REFUSED_WRITE), first.observations
        assert first.summary["exit_reason"] != "agent", first.summary
        assert again.done.returncode == 0, again.done.stderr
        assert any("TRIED" in o for o in again.observations), again.observations
        code, out, _ = _review(first.session_id)
        assert code == 0 and "resumed.txt" in out  # the positive control: it ran, inside
    else:
        assert "PLANTED=0" in first.observations[0], first.observations
        assert again.done.returncode != 0
        _one_line_refusal(again.done.stderr)
    assert not (outside / "widened").exists()
    assert not hook.exists()
    assert changed_paths(before, repo_state(repo)) == set()
    git(repo, "commit", "--allow-empty", "-qm", "the user's next commit")
    assert not (outside / "hook-ran").exists()


def test_git_commit_inside_the_worktree_still_works(level: str, tmp_path: Path) -> None:
    repo = make_user_repo(tmp_path)
    before = repo_state(repo)
    command = (
        "echo made by the agent > agent.txt && git add -A && git commit -qm 'agent work' "
        "&& git log -1 --format=%s"
    )
    run = run_attack(repo, [bash(command)], tmp_path, level)
    assert run.observations[0].startswith("Exit code: 0"), run.observations
    assert "agent work" in run.observations[0]
    code, out, err = _review(run.session_id)
    assert code == 0, err
    assert "agent.txt" in out
    assert changed_paths(before, repo_state(repo)) == set()
