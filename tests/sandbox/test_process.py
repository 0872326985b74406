"""Process-tree handling without any sandbox: kill_tree and run_process_tree on real processes."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from frogdesk.sandbox.confine import Confinement
from frogdesk.sandbox.process import (
    MAX_OUTPUT_BYTES,
    descendants,
    dropped_chars,
    kill_tree,
    run_process_tree,
)
from frogdesk.sandbox.shells.base import data_fd, supervisor_launch


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
