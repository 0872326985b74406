"""kill -9 in the middle of a session, then `sessions list` says so and `sessions resume` finishes it."""

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
from frogdesk.sessions.store import SessionStore
from tests.support.scripted import fingerprint, fixing_replies, frogdesk, make_repo, write_script


def wait_for(predicate: object, what: str, limit: float = 120.0) -> None:
    """Poll until predicate() is true; the limit only guards against a hang, it is not a measurement."""
    deadline = time.monotonic() + limit
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


@pytest.mark.slow
def test_kill_then_resume(tmp_path: Path, sandboxed_bash: str) -> None:
    repo = make_repo(tmp_path)
    before = fingerprint(repo)
    script = write_script(tmp_path / "script.jsonl", fixing_replies(slow_step=True))
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "frogdesk", "run", "Fix the failing test.", "--repo", str(repo),
         "--script", str(script), "--output", str(out), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    store = SessionStore(AppPaths.default().sessions_dir)

    def step_two_running() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"run ended early: {proc.communicate()}")
        records = store.list()
        return (
            bool(records)
            and records[0].n_steps == 1
            and (Path(records[0].worktree + ".sandbox") / "home" / "slept").exists()
        )

    wait_for(step_two_running, "the second step's command to start")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    [record] = store.list()
    transcript = store.read_transcript(record.id)
    assert (
        len(transcript.steps) == 1 and transcript.end is None
    )  # the step in flight is lost, no more

    listed = json.loads(frogdesk("sessions", "list", "--json").stdout)
    assert [(s["id"], s["status"], s["n_steps"]) for s in listed] == [(record.id, "interrupted", 1)]
    table = frogdesk("sessions", "list").stdout
    assert record.id in table and "interrupted" in table

    done = frogdesk("sessions", "resume", record.id[:12], "--output", str(out), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["session_id"] == record.id
    assert summary["exit_reason"] == "agent" and summary["n_steps"] == 5
    assert summary["files_changed"] == ["calc.py"]
    traj = json.loads((out / "trajectory_seed-0.json").read_text(encoding="utf-8"))
    assert [s["step"] for s in traj["steps"]] == [0, 1, 2, 3, 4]
    assert [m["role"] for m in traj["messages"]] == ["system", "user"] + [
        "assistant",
        "tool",
    ] * 4 + ["assistant"]
    assert traj["steps"][1]["observations"][0]["observation"].startswith("Exit code: 1\n")
    assert (
        traj["steps"][3]["observations"][0]["observation"]
        == "Exit code: 0\nSTDOUT:\nOK\n\nSTDERR:\n"
    )
    assert fingerprint(repo) == before

    listed = json.loads(frogdesk("sessions", "list", "--json").stdout)
    assert listed[0]["status"] == "finished" and listed[0]["exit_reason"] == "agent"

    finished = frogdesk("sessions", "resume", record.id)
    assert finished.returncode == 2 and "already ended with a final answer" in finished.stderr

    gone = frogdesk("sessions", "discard", record.id)
    assert gone.returncode == 0 and not Path(record.worktree).exists()
    again = frogdesk("sessions", "resume", record.id)
    assert again.returncode == 2 and "discarded" in again.stderr


@pytest.mark.slow
def test_sigterm_stops_cleanly_then_resume(tmp_path: Path, sandboxed_bash: str) -> None:
    repo = make_repo(tmp_path)
    script = write_script(tmp_path / "script.jsonl", fixing_replies(slow_step=True))
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "frogdesk", "run", "Fix it.", "--repo", str(repo),
         "--script", str(script), "--output", str(out), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    store = SessionStore(AppPaths.default().sessions_dir)

    def sleeping() -> bool:
        records = store.list()
        return (
            bool(records) and (Path(records[0].worktree + ".sandbox") / "home" / "slept").exists()
        )

    wait_for(sleeping, "the second step's command to start")
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1, stderr
    summary = json.loads(stdout)
    assert summary["exit_reason"] == "cancelled" and summary["n_steps"] == 2
    traj = json.loads((out / "trajectory_seed-0.json").read_text(encoding="utf-8"))
    assert traj["exit_reason"] == "cancelled" and traj["partial"] is True
    [record] = store.list()
    assert record.status == "interrupted" and record.pid == 0

    done = frogdesk("sessions", "resume", record.id, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["exit_reason"] == "agent"
