"""Every bench starts from a fresh clone as the README shows it: `python bench/NAME.py`, from
any folder, without PYTHONPATH (the tests' shared model writers are found all the same)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_every_bench_answers_help_without_pythonpath(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    scripts = sorted(BENCH.glob("*.py"))
    assert len(scripts) >= 10
    runs = {
        script.name: subprocess.Popen(
            [sys.executable, str(script), "--help"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for script in scripts
    }
    failed = {}
    for name, run in runs.items():
        out, err = run.communicate(timeout=120)
        if run.returncode != 0 or "usage:" not in out:
            failed[name] = err.strip().splitlines()[-1:] or out[:200]
    assert failed == {}
