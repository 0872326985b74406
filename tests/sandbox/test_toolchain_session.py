"""A scripted session in a real repository with its own `.venv` runs the repository's tests.

`frogdesk run --backend script` at the bwrap and landlock levels: `python -m pytest` and
`pytest` come from the repository's `.venv` (pytest installed there, the package installed
editable from `src/`), fail before the session's edit and pass after it, which they can
only do by importing the worktree's code: the editable install names the user's `src/`,
where the bug stays. The user's repository, venv included, is unchanged byte for byte.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.attacks.harness import Outcome, bash, call, frogdesk, reply, run_attack
from tests.support.scripted import write_script
from tests.support.toolchain_repo import BUGGY, FIXED, PACKAGE_FILE, tree_hashes, venv_repo

LEVELS = ("bwrap", "landlock")


@pytest.fixture(scope="module")
def repo() -> Path:
    """The developer's repository with its `.venv` (built once per test run)."""
    return venv_repo()


@pytest.fixture(params=LEVELS)
def level(request: pytest.FixtureRequest) -> str:
    """Each confining level, skipped where this machine lacks it."""
    from frogdesk.sandbox.errors import SandboxError
    from frogdesk.sandbox.levels import detect

    try:
        detect(str(request.param))
    except SandboxError as exc:
        pytest.skip(str(exc))
    return str(request.param)


def _session(repo: Path, tmp_path: Path, level: str, env: dict[str, str] | None = None) -> Outcome:
    edit = call(
        "Edit", file_path=PACKAGE_FILE, old_string="return a - b", new_string="return a + b"
    )
    replies = [
        bash("python -m pytest -q 2>&1 | tail -2; echo EXIT=${PIPESTATUS[0]}"),
        reply("add subtracts.", edit),
        bash("python -m pytest -q 2>&1 | tail -2; echo EXIT=${PIPESTATUS[0]}"),
        bash("pytest -q 2>&1 | tail -2; echo EXIT=${PIPESTATUS[0]}"),
        bash(".venv/bin/pytest -q 2>&1 | tail -2; echo EXIT=${PIPESTATUS[0]}"),
        bash("command -v python python3 pytest; echo VENV=$VIRTUAL_ENV"),
    ]
    return run_attack(repo, replies, tmp_path, level, env=env)


def _check(outcome: Outcome, repo: Path) -> None:
    before_edit, _, python_m, pytest_cmd, relative, which = outcome.observations[:6]
    # The control: the same command fails before the edit (the bug is there).
    assert "1 failed" in before_edit and "EXIT=1" in before_edit, before_edit
    for observed in (python_m, pytest_cmd, relative):
        assert "1 passed" in observed and "EXIT=0" in observed, observed
    assert f"{repo}/.venv/bin/python\n" in which, which
    assert f"{repo}/.venv/bin/pytest\n" in which, which
    assert f"VENV={repo}/.venv" in which, which
    assert outcome.summary["files_changed"] == [PACKAGE_FILE], outcome.summary


def test_the_repositorys_venv_runs_the_sessions_code(
    repo: Path, tmp_path: Path, level: str
) -> None:
    before = tree_hashes(repo)
    outcome = _session(repo, tmp_path, level)
    _check(outcome, repo)
    assert (repo / PACKAGE_FILE).read_text(encoding="utf-8") == BUGGY
    assert tree_hashes(repo) == before


def test_an_activated_venv_is_carried_after_the_login_profile(
    repo: Path, tmp_path: Path, level: str
) -> None:
    """The developer activated the venv: VIRTUAL_ENV and its bin/ first on PATH."""
    env = {
        "VIRTUAL_ENV": str(repo / ".venv"),
        "PATH": f"{repo / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    before = tree_hashes(repo)
    _check(_session(repo, tmp_path, level, env), repo)
    assert tree_hashes(repo) == before


def test_the_user_side_still_runs_the_users_code(repo: Path, tmp_path: Path) -> None:
    """The control for the editable install: outside the session the same venv imports the
    user's `src/` (the bug), so a pass inside can only come from the worktree."""
    done = subprocess.run(
        [str(repo / ".venv" / "bin" / "python"), "-c", "import calcpkg; print(calcpkg.add(2, 3))"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        check=True,
    )
    assert done.stdout.strip() == "-1"
    assert FIXED != BUGGY


def test_attempts_pass_the_detected_check_with_the_repositorys_venv(
    repo: Path, tmp_path: Path, level: str
) -> None:
    """`run --attempts 2`: the detected check (pytest, from the repository's `.venv`) passes
    the attempt that fixed the code and fails the one that did not, in each one's sandbox."""
    before = tree_hashes(repo)
    fix = call("Edit", file_path=PACKAGE_FILE, old_string="return a - b", new_string="return a + b")
    right = write_script(
        tmp_path / "right.jsonl", [reply("add subtracts.", fix), reply("Done.", answer="Fixed.")]
    )
    idle = write_script(tmp_path / "idle.jsonl", [reply("Nothing.", answer="No change.")])
    done = frogdesk(
        "run", "fix add", "--repo", str(repo), "--backend", "script", "--attempts", "2",
        "--script", str(right), "--script", str(idle), "--sandbox", level, "--json", "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    first, second = data["attempts"]
    assert "pytest" in first["check"]["command"], first["check"]
    assert first["check"]["exit_code"] == 0, first["check"]
    # The control: the same detected check, in the attempt that left the bug, fails.
    assert second["check"]["exit_code"] != 0, second["check"]
    assert data["chosen"] == first["session_id"]
    assert tree_hashes(repo) == before
