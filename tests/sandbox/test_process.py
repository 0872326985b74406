"""Process-tree handling without any sandbox: kill_tree and run_process_tree on real processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from frogdesk.sandbox.process import MAX_OUTPUT_BYTES, descendants, kill_tree, run_process_tree


def test_kill_tree_takes_setsid_grandchildren(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        ["/bin/bash", "-c", "setsid sleep 300 & (sleep 301 &); sleep 302"], start_new_session=True
    )
    try:
        while len(descendants(proc.pid)) < 2:
            pass  # until the children are forked
        kids = descendants(proc.pid)
        kill_tree(proc.pid)
        proc.wait()
        for pid in kids:
            assert (
                not Path(f"/proc/{pid}").exists()
                or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
            )
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
