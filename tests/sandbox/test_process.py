"""Process-tree handling without any sandbox: kill_tree, run_process_tree and the supervisor on real processes."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from frogdesk.sandbox.cgroup import PREFIX, CommandCgroup
from frogdesk.sandbox.confine import Confinement
from frogdesk.sandbox.process import (
    MAX_OUTPUT_BYTES,
    ProcessResult,
    descendants,
    dropped_chars,
    kill_tree,
    run_process_tree,
)
from frogdesk.sandbox.shells.base import data_fd, supervisor_launch
from tests.support.process_storm import SCRIPT as STORM
from tests.support.process_storm import alive, kill_all


def wait_gone(pid: int, seconds: float) -> bool:
    """SIGKILL is delivered asynchronously: give the kernel a moment to finish the process."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.01)
    return False


def test_kill_tree_takes_setsid_grandchildren(tmp_path: Path) -> None:
    # The trailing `true` keeps bash from exec'ing the last command in its own place.
    proc = subprocess.Popen(
        ["/bin/bash", "-c", "setsid sleep 300 & sleep 302 & wait; true"], start_new_session=True
    )
    try:
        deadline = time.monotonic() + 30
        while len(descendants(proc.pid)) < 2:  # until the children are forked
            assert time.monotonic() < deadline, "the children never appeared"
            time.sleep(0.01)
        kids = descendants(proc.pid)
        kill_tree(proc.pid)
        proc.wait()
        for pid in kids:
            assert wait_gone(pid, seconds=5), f"process {pid} survived kill_tree"
    finally:
        if proc.poll() is None:
            proc.kill()


def test_output_is_capped_and_exit_codes_from_signals(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"]}
    big = run_process_tree(
        [sys.executable, "-c", f"import sys; sys.stdout.write('x' * {MAX_OUTPUT_BYTES + 10})"],
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert big.stdout == "x" * MAX_OUTPUT_BYTES
    assert dropped_chars(big) == 10
    # As subprocess says it (and so Leaf): killed by signal N is -N, not bash's 128+N.
    killed = run_process_tree(
        ["/bin/bash", "-c", "kill -TERM $$"], cwd=tmp_path, env=env, timeout=60
    )
    assert killed.exit_code == -15
    exited = run_process_tree(["/bin/bash", "-c", "exit 143"], cwd=tmp_path, env=env, timeout=60)
    assert exited.exit_code == 143


def test_output_past_the_cap_is_counted_in_characters(tmp_path: Path) -> None:
    """Leaf counts the characters of the whole output; bytes past the cap are counted too,
    decoded (a two-byte character split by the cap, invalid bytes as one each)."""
    env = {"PATH": os.environ["PATH"]}
    tail = "é" * 1000
    script = (
        "import sys; out = sys.stdout.buffer; out.write(b'a' + 'é'.encode() * "
        f"{MAX_OUTPUT_BYTES // 2}); out.write(b'\\xff\\xfe'); sys.stderr.write({tail!r})"
    )
    result = run_process_tree([sys.executable, "-c", script], cwd=tmp_path, env=env, timeout=60)
    whole = "a" + "é" * (MAX_OUTPUT_BYTES // 2) + "\ufffd\ufffd"
    assert whole.startswith(result.stdout[:-1]) and len(result.stdout.encode()) >= MAX_OUTPUT_BYTES
    assert len(result.stdout) + dropped_chars(result) == len(whole)
    assert result.stderr == tail  # control: a stream under the cap is whole


def test_the_supervisor_takes_a_configuration_no_argument_could_hold(tmp_path: Path) -> None:
    """A Landlock ruleset beside a hidden folder in a busy /tmp lists thousands of paths; the
    configuration goes on an inherited descriptor. The control: the same configuration as
    one argument is refused by the kernel (E2BIG)."""
    many = tuple(
        f"/var/tmp/pytest-of-someone/pytest-{i:06d}/a-rather-long-name" for i in range(5000)
    )
    confinement = Confinement(read=many)
    launch = supervisor_launch("echo confined-ok", confinement, {"PATH": "/usr/bin:/bin"})
    try:
        result = run_process_tree(
            launch.argv, cwd=tmp_path, env=launch.env, timeout=60, pass_fds=launch.pass_fds
        )
    finally:
        for fd in launch.pass_fds:
            os.close(fd)
    assert result.exit_code == 0 and "confined-ok" in result.stdout, result
    as_argument = json.dumps({"argv": ["/bin/true"], "confinement": confinement.to_json()})
    assert len(as_argument) > 128 * 1024
    with pytest.raises(OSError) as refused:
        subprocess.run(["/bin/echo", as_argument], check=False, capture_output=True)
    assert refused.value.errno == errno.E2BIG


def test_the_supervisor_refuses_a_bad_configuration(tmp_path: Path) -> None:
    """One clear line and exit 125, never a traceback or an unconfined command."""
    for data in (b"not json", b"[1, 2]", b'{"argv": "ls", "confinement": {}}'):
        fd = data_fd("bad-config", data)
        try:
            done = subprocess.run(
                [sys.executable, "-m", "frogdesk.sandbox.supervisor", "--config-fd", str(fd)],
                pass_fds=(fd,),
                capture_output=True,
                text=True,
                check=False,
                cwd=tmp_path,
            )
        finally:
            os.close(fd)
        assert done.returncode == 125, done
        assert done.stderr.startswith("frogdesk sandbox: unreadable configuration"), done.stderr
        assert "Traceback" not in done.stderr


def _supervised(command: str, tmp_path: Path, use_cgroup: bool, **kw: Any) -> ProcessResult:
    """run_process_tree of command under FrogDesk's supervisor, unconfined (the none level)."""
    launch = supervisor_launch(
        command, Confinement(), {"PATH": "/usr/bin:/bin"}, use_cgroup=use_cgroup
    )
    try:
        result = run_process_tree(
            launch.argv,
            cwd=tmp_path,
            env=launch.env,
            pass_fds=launch.pass_fds,
            supervised=launch.supervised,
            **{"timeout": 120, **kw},
        )
    finally:
        for fd in launch.pass_fds:
            os.close(fd)
    assert isinstance(result, ProcessResult)
    return result


@pytest.fixture
def token() -> Iterator[str]:
    """A marker only this test's storm carries; whatever still carries it is killed after."""
    mark = f"frogdesk-storm-{uuid.uuid4().hex}"
    yield mark
    assert kill_all(mark) == 0, "an attack process was left for the cleanup"


def _storm(token: str, sleepers: int) -> str:
    return f"{sys.executable} {STORM} storm {token} {sleepers}"


def _rounds(token: str, tmp_path: Path, use_cgroup: bool, rounds: int, sleepers: int) -> None:
    for i in range(rounds):
        mark = f"{token}-{i}"
        result = _supervised(f"{_storm(mark, sleepers)}; sleep 0.1", tmp_path, use_cgroup)
        assert result.exit_code == 0, result
        assert alive(mark) == [], f"round {i}: a storm process outlived its command"


CGROUP = [pytest.param(False, id="subreaper"), pytest.param(True, id="cgroup")]


@pytest.mark.parametrize("use_cgroup", CGROUP)
def test_the_supervisor_outlasts_a_sigcont_storm(
    use_cgroup: bool, token: str, tmp_path: Path
) -> None:
    """setsid, a double fork, members that SIGCONT their group and fork: nothing outlives
    the command, with the subreaper alone (a normal user without a cgroup) and with one.
    The positive control (the old stop-then-kill losing a member to the same storm) is
    tests/attacks/test_process_escape.py's."""
    _rounds(token, tmp_path, use_cgroup, rounds=30, sleepers=100)


@pytest.mark.slow
@pytest.mark.parametrize("use_cgroup", CGROUP)
def test_the_supervisor_outlasts_a_sigcont_storm_many_rounds(
    use_cgroup: bool, token: str, tmp_path: Path
) -> None:
    _rounds(token, tmp_path, use_cgroup, rounds=200, sleepers=500)


@pytest.mark.parametrize("use_cgroup", CGROUP)
def test_timeout_and_cancel_end_the_storm_before_returning(
    use_cgroup: bool, token: str, tmp_path: Path
) -> None:
    """On timeout or cancel FrogDesk asks the supervisor to end (SIGTERM) and waits: the
    storm is gone when run_process_tree returns, and the exit says why."""
    command = f"{_storm(token, 300)}; sleep 600"
    timed = _supervised(command, tmp_path, use_cgroup, timeout=3)
    assert timed.timed_out and timed.exit_code == -1
    assert alive(token) == []
    cancel = threading.Event()
    waiter = threading.Thread(target=lambda: _set_when_up(token, cancel), daemon=True)
    waiter.start()
    cancelled = _supervised(command, tmp_path, use_cgroup, cancel=cancel, timeout=600)
    waiter.join()
    assert cancelled.cancelled and cancelled.exit_code == -1
    assert alive(token) == []


def _set_when_up(token: str, cancel: threading.Event) -> None:
    deadline = time.monotonic() + 300
    while len(alive(token)) < 300 and time.monotonic() < deadline:
        time.sleep(0.05)
    cancel.set()


def test_a_supervisor_whose_parent_is_gone_starts_nothing(tmp_path: Path) -> None:
    """FrogDesk dead before the supervisor set its death signal: nothing may start, since
    nobody would end it. The control: with the right parent the same command runs."""
    marker = tmp_path / "ran"
    gone = subprocess.Popen(["/bin/true"])
    gone.wait()
    for parent, code in ((gone.pid, 125), (os.getpid(), 0)):
        config = {"argv": ["/bin/touch", str(marker)], "confinement": {}, "parent": parent}
        fd = data_fd("config", json.dumps(config).encode())
        try:
            done = subprocess.run(
                [sys.executable, "-m", "frogdesk.sandbox.supervisor", "--config-fd", str(fd)],
                pass_fds=(fd,), check=False, cwd=tmp_path,
            )  # fmt: skip
        finally:
            os.close(fd)
        assert done.returncode == code
        assert marker.exists() == (code == 0)


def test_a_command_cgroup_ends_every_member_at_once(tmp_path: Path) -> None:
    """cgroup.kill takes every process in the group, whoever its parent is; the group is
    removed after. Skipped where no cgroup can be had (a normal user outside a delegated one)."""
    group, why = CommandCgroup.create(os.getpid())
    if group is None:
        pytest.skip(why)
    assert group.path.name.startswith(PREFIX)
    try:
        code = (
            "import os, sys, time; open(sys.argv[1] + '/cgroup.procs', 'w').write('0');"
            " os.setsid(); os.fork() or os.fork(); time.sleep(600)"
        )
        proc = subprocess.Popen([sys.executable, "-c", code, str(group.path)])
        deadline = time.monotonic() + 60
        while len((group.path / "cgroup.procs").read_text().split()) < 3:
            assert time.monotonic() < deadline, "the members never joined"
            time.sleep(0.01)
        assert group.populated()
        group.remove()
        proc.wait()
        assert not group.path.exists()
    finally:
        group.remove()
