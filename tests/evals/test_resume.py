"""A SIGKILLed eval loses no finished task, and `--resume` runs only the rest, to the same table."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from frogdesk.paths import AppPaths
from tests.evals.helpers import FIX, NOTHING, bash, eval_json, scripts, task_folder

SLOW = [bash("sleep 8"), *FIX]
"""The second task takes a while, so the kill lands in it."""


@pytest.mark.slow
def test_a_killed_eval_resumes_where_it_stopped(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    for name in ("a-first", "b-second", "c-third"):
        task_folder(suite, name)
    replies = scripts(tmp_path / "s", {"a-first": FIX, "b-second": SLOW, "c-third": NOTHING})
    args = [str(suite), "--script", str(replies), "--no-precheck", "--json", "--quiet"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "frogdesk", "eval", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    evals = AppPaths.default().data_dir / "evals"
    deadline = time.monotonic() + 120
    while not list(evals.glob("*/*/tasks/a-first.json")):
        assert proc.poll() is None and time.monotonic() < deadline, "the first task never ended"
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    (first,) = list(evals.glob("*/*/tasks/a-first.json"))
    run_dir = first.parent.parent
    assert sorted(p.name for p in (run_dir / "tasks").iterdir()) == ["a-first.json"]
    stored = first.read_bytes()
    resumed = eval_json(*args[:-2], "--resume", run_dir.name)
    assert first.read_bytes() == stored  # the finished task was not run again
    scratch = AppPaths.default().cache_dir / "eval-repos"
    assert not list(scratch.glob(f"eval-{proc.pid}-*"))  # the killed run's copies are gone
    verdicts = {t["task"]: t["solved"] for t in resumed["tasks"]}
    assert verdicts == {"a-first": True, "b-second": True, "c-third": False}
    assert resumed["run_id"] == run_dir.name and resumed["finished"]
    fresh = eval_json(*args[:-2])
    assert {t["task"]: t["solved"] for t in fresh["tasks"]} == verdicts
    assert (fresh["solved"], fresh["total"]) == (resumed["solved"], resumed["total"])
    summary = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert summary["solved"] == 2 and summary["total"] == 3


def test_resume_refuses_other_settings(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    task_folder(suite, "only")
    replies = scripts(tmp_path / "s", {"only": NOTHING})
    first = eval_json(str(suite), "--script", str(replies), "--no-precheck")
    done = subprocess.run(
        [sys.executable, "-m", "frogdesk", "eval", str(suite), "--script", str(replies),
         "--max-steps", "3", "--resume", first["run_id"]],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "other settings" in done.stderr
