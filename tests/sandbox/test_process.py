"""Process-tree handling without any sandbox: kill_tree and run_process_tree on real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from frogdesk.sandbox.process import MAX_OUTPUT_BYTES, descendants, kill_tree, run_process_tree


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
    assert len(big.stdout) > MAX_OUTPUT_BYTES
    assert big.stdout.endswith("[10 more bytes of output dropped]")
    killed = run_process_tree(
        ["/bin/bash", "-c", "kill -TERM $$"], cwd=tmp_path, env=env, timeout=60
    )
    assert killed.exit_code == 128 + 15
