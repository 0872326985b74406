"""Attack: processes that outlive their Bash call (setsid, a double fork, a SIGCONT storm, sleepers).

The red team's escape at the landlock level: a new session whose members keep SIGCONT-ing
their group and forking short-lived children (one whose parent died takes its place),
behind 2,500 sleepers that slow every /proc scan, outran the old stop-then-kill rounds
and lived on with parent pid 1. Replayed through the real CLI at every level; after each
Bash call (the next call looks) and after `frogdesk run` returns (the test looks) no
process of the attack may be alive. The positive control runs the same storm under the
old supervisor's algorithm and sees a survivor.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.attacks.harness import bash, reply, run_attack
from tests.attacks.payloads import PY
from tests.support import process_storm
from tests.support.e2e import changed_paths, make_user_repo, repo_state
from tests.support.process_storm import SCRIPT, SLEEPERS, alive, kill_all
from tests.support.scripted import write_script

ROUNDS = 3
"""Bash calls per run that each start a storm; the slow sweep runs many more."""
ROOM = {"FROGDESK_BASH_MAX_PROCESSES": "20000"}
"""The storm needs more processes than the default cap (which would end it for us)."""
CONTROL_TRIES = 12
"""The old algorithm lost a member within 4-6 tries for the red team; in our runs, 2-4."""


def _available(level: str) -> str | None:
    from frogdesk.sandbox.errors import SandboxError
    from frogdesk.sandbox.levels import detect

    try:
        detect(level)
    except SandboxError as exc:
        return str(exc)
    return None


@pytest.fixture(params=("landlock", "none", "bwrap"))
def any_level(request: pytest.FixtureRequest) -> str:
    """Every level, none included; bwrap is the control that already held."""
    why = _available(str(request.param))
    if why is not None:
        pytest.skip(why)
    return str(request.param)


@pytest.fixture
def token() -> Iterator[str]:
    """A marker only this test's attack carries; whatever still carries it is killed after."""
    mark = f"frogdesk-storm-{uuid.uuid4().hex}"
    yield mark
    kill_all(mark)


IN_REPO = "process_storm.py"
"""The attack as the model would bring it: a file in the worktree, which every level can
run (the checkout holding the tests may sit under /tmp, which bwrap replaces)."""


def _storm(token: str, sleepers: int = SLEEPERS) -> str:
    return f"{PY} {IN_REPO} storm {token} {sleepers}"


def _check(token: str) -> str:
    return f"{PY} {IN_REPO} alive {token}"


def _attack_repo(root: Path) -> Path:
    """The user's repository, with the attack script untracked in it (the worktree gets it)."""
    repo = make_user_repo(root)
    shutil.copyfile(SCRIPT, repo / IN_REPO)
    return repo


def _run(repo: Path, replies: list[str], tmp: Path, level: str) -> list[str]:
    """`frogdesk run` of the replies; at the none level every command is approved on a terminal."""
    if level != "none":
        run = run_attack(repo, replies, tmp, level, env=ROOM)
        assert run.done.returncode == 0, run.done.stderr
        return run.observations
    # ask_on_tty asks only a terminal: give it one that answers yes to every command.
    primary, secondary = os.openpty()
    try:
        os.write(primary, b"y\n" * (len(replies) + 1))
        script = write_script(tmp / "script.jsonl", [*replies, reply("Done.", answer="Done.")])
        done = subprocess.run(
            [sys.executable, "-m", "frogdesk", "run", "Do the task.", "--repo", str(repo),
             "--backend", "script", "--script", str(script), "--sandbox", "none",
             "--output", str(tmp / "out-run"), "--json", "--quiet"],
            stdin=secondary, capture_output=True, text=True, timeout=900, check=False,
            env={**os.environ, **ROOM},
        )  # fmt: skip
    finally:
        os.close(secondary)
        os.close(primary)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return _observations(str(json.loads(done.stdout)["session_id"]))


def _observations(session_id: str) -> list[str]:
    from frogdesk.paths import AppPaths
    from frogdesk.sessions.store import SessionStore

    transcript = SessionStore(AppPaths.default().sessions_dir).read_transcript(session_id)
    return [o.observation for step in transcript.steps for o in step.observations]


def _replay(level: str, token: str, tmp: Path, rounds: int) -> None:
    """Start a storm in each of `rounds` Bash calls, each call first counting the last one's."""
    repo = _attack_repo(tmp)
    before = repo_state(repo)
    replies = [bash(f"{_check(token)}; {_storm(f'{token}-{i}')}; sleep 0.2") for i in range(rounds)]
    seen = _run(repo, [*replies, bash(_check(token))], tmp, level)
    left = alive(token)  # after `frogdesk run` returned
    assert left == [], f"{len(left)} attack processes outlived `frogdesk run` at {level}"
    assert len(seen) == rounds + 1, seen
    for i, observation in enumerate(seen):
        # At bwrap the count sees only the call's own namespace; the check above sees all.
        assert "attack processes alive: 0" in observation, (i, observation)
        assert i == rounds or "storm up: 2500 sleepers" in observation, (i, observation)
    assert changed_paths(before, repo_state(repo)) == set()


def test_the_old_stop_then_kill_supervisor_leaves_a_survivor(token: str) -> None:
    """Positive control: the same storm under the supervisor's old algorithm (SIGSTOP rounds,
    then SIGKILL) leaves a member alive, reparented away from the supervisor."""
    survivors: list[int] = []
    for i in range(CONTROL_TRIES):
        command = f"{_storm(f'{token}-{i}')}; sleep 0.2"
        subprocess.run(
            [sys.executable, str(SCRIPT), "old-supervisor", command],
            cwd=SCRIPT.parent,
            timeout=600,
            check=True,
        )
        survivors = alive(token)
        if survivors:
            break
    assert survivors, f"the old algorithm held in {CONTROL_TRIES} tries: the storm is broken"


def test_no_process_of_the_storm_outlives_a_bash_call(
    any_level: str, token: str, tmp_path: Path
) -> None:
    _replay(any_level, token, tmp_path, ROUNDS)


@pytest.mark.slow
def test_no_process_of_the_storm_outlives_a_bash_call_many_rounds(
    any_level: str, token: str, tmp_path: Path
) -> None:
    _replay(any_level, token, tmp_path, 40)


def test_a_landlocked_command_cannot_kill_its_supervisor(token: str, tmp_path: Path) -> None:
    """Killing the subreaper would hand its orphans to pid 1; at the landlock level the
    supervisor is outside the command's Landlock domain, so the signal is refused. The
    control: at the none level the same kill succeeds (and the command's cgroup, where
    there is one, still takes the storm)."""
    command = f"{_storm(token, 200)}; kill -9 $PPID; echo kill-rc=$?"
    levels = [lv for lv in ("landlock", "none") if _available(lv) is None]
    if "landlock" not in levels:
        pytest.skip("no landlock level here")
    for level in levels:
        (tmp_path / level).mkdir()
        seen = _run(_attack_repo(tmp_path / level), [bash(command)], tmp_path / level, level)
        assert "storm up" in seen[0], seen
        if level == "landlock":
            assert "kill-rc=1" in seen[0], seen
            assert alive(token) == []
        elif _cgroup_available():
            assert "kill-rc=0" in seen[0] or "-9" in seen[0], seen
            assert alive(token) == []
        kill_all(token)


def _cgroup_available() -> bool:
    from frogdesk.sandbox.cgroup import CommandCgroup

    group, _ = CommandCgroup.create(os.getpid())
    if group is None:
        return False
    group.remove()
    return True


def _wait_until_up(token: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 300
    while len(alive(token)) < SLEEPERS // 2:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the storm never came up"
        time.sleep(0.2)


@pytest.mark.parametrize("how", ["ctrl-c", "sigkill"])
def test_frogdesk_stopped_mid_command_leaves_no_process(
    how: str, token: str, tmp_path: Path
) -> None:
    """Ctrl+C (cancel) ends the command's processes before `frogdesk run` returns; FrogDesk
    SIGKILLed leaves its supervisor to end them (the parent's death signal)."""
    level = "landlock" if _available("landlock") is None else "bwrap"
    if _available(level) is not None:
        pytest.skip("no confining level here")
    repo = _attack_repo(tmp_path)
    script = write_script(
        tmp_path / "script.jsonl",
        [bash(f"{_storm(token)}; sleep 600", timeout="900"), reply("Done.", answer="Done.")],
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "frogdesk", "run", "Do the task.", "--repo", str(repo),
         "--backend", "script", "--script", str(script), "--sandbox", level,
         "--output", str(tmp_path / "out"), "--json", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **ROOM},
    )  # fmt: skip
    try:
        _wait_until_up(token, proc)
        proc.send_signal(signal.SIGINT if how == "ctrl-c" else signal.SIGKILL)
        proc.communicate(timeout=300)
        if how == "ctrl-c":
            assert alive(token) == [], "Ctrl+C returned before the command's processes ended"
        else:
            # Nobody waits for the supervisor now: give it the time it needs to finish.
            deadline = time.monotonic() + 120
            while alive(token) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert alive(token) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_storm_script_is_the_one_the_sandbox_runs() -> None:
    """The sandbox runs this file by path: it must stay standard-library only."""
    assert Path(process_storm.__file__).resolve() == SCRIPT
    imported = {
        line.split()[1]
        for line in SCRIPT.read_text().splitlines()
        if line.startswith(("import ", "from "))
    }
    assert imported <= {
        "__future__",
        "contextlib",
        "ctypes",
        "os",
        "signal",
        "sys",
        "time",
        "pathlib",
    }
