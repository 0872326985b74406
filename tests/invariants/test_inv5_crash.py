"""Invariant 5: a session killed with SIGKILL keeps its transcript and worktree, and resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from frogdesk.paths import AppPaths
from frogdesk.sessions.store import SessionStore
from tests.support.e2e import (
    call,
    changed_paths,
    frogdesk,
    make_user_repo,
    reply,
    repo_state,
    write_script,
)

# The first run of this command writes into the worktree, then hangs until it is killed;
# the re-run after a resume goes straight through.
SLOW = (
    'if [ ! -e "$HOME/slept" ]; then touch "$HOME/slept"; echo partial > partial.txt; '
    "sleep 300; fi; echo finished-step"
)


def wait_for(predicate: Callable[[], bool], what: str, limit: float = 120.0) -> None:
    """Poll until true; the limit only stops a hang, it measures nothing."""
    deadline = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


def crash_replies() -> list[str]:
    """Write a file, run the hanging command, edit, answer."""
    return [
        reply("Write.", call("Write", file_path="new.txt", content="written before the crash\n")),
        reply("Slow command.", call("Bash", command=SLOW)),
        reply("Edit.", call("Edit", file_path="new.txt", old_string="before", new_string="around")),
        reply("Done.", answer="Wrote and edited new.txt."),
    ]


@pytest.mark.slow
def test_sigkill_mid_command_then_review_and_resume(tmp_path: Path, sandbox_level: str) -> None:
    repo = make_user_repo(tmp_path)
    before = repo_state(repo)
    script = write_script(tmp_path / "script.jsonl", crash_replies())
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "frogdesk", "run", "Write new.txt.", "--repo", str(repo),
         "--script", str(script), "--output", str(out), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    store = SessionStore(AppPaths.default().sessions_dir)

    def hanging() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"the run ended early: {proc.communicate()}")
        records = store.list()
        return bool(records) and (Path(records[0].worktree) / "partial.txt").is_file()

    wait_for(hanging, "the second step's command to write and hang")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    [record] = store.list()
    worktree = Path(record.worktree)

    # On disk: the opening messages and the finished first step; the step in flight is lost.
    transcript = store.read_transcript(record.id)
    assert [m.role for m in transcript.messages] == ["system", "user"]
    assert [s.step for s in transcript.steps] == [0] and transcript.end is None
    assert not transcript.dropped_tail
    # The worktree stays, with what the tools and the killed command wrote.
    assert (worktree / "new.txt").read_text(encoding="utf-8") == "written before the crash\n"
    assert (worktree / "partial.txt").read_text(encoding="utf-8") == "partial\n"
    assert changed_paths(before, repo_state(repo)) == set()
    # A crash in the middle of a write leaves a torn last line: it is dropped, never fatal.
    transcript_file = store.session_dir(record.id) / "transcript.jsonl"
    with open(transcript_file, "ab") as handle:
        handle.write(b'{"kind": "step", "step": {"step": 1, "assis')
    assert store.read_transcript(record.id).dropped_tail

    listed = frogdesk("sessions", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    [row] = json.loads(listed.stdout)
    assert (row["id"], row["status"], row["n_steps"]) == (record.id, "interrupted", 1)
    reviewed = frogdesk("review", record.id, "--json")
    assert reviewed.returncode == 0, reviewed.stderr
    paths = [f["path"] for f in json.loads(reviewed.stdout)["files"]]
    assert paths == ["new.txt", "partial.txt"]

    resumed = frogdesk("sessions", "resume", record.id, "--output", str(out), "--json")
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert (summary["exit_reason"], summary["n_steps"]) == ("agent", 4)
    assert sorted(summary["files_changed"]) == ["new.txt", "partial.txt"]
    traj = json.loads((out / "trajectory_seed-0.json").read_text(encoding="utf-8"))
    obs = [s["observations"][0]["observation"] for s in traj["steps"][:3]]
    assert obs == [
        "Wrote new.txt (25 bytes).",
        "Exit code: 0\nSTDOUT:\nfinished-step\n\nSTDERR:\n",
        "Edited new.txt (1 replacement).",
    ]
    assert (worktree / "new.txt").read_text(encoding="utf-8") == "written around the crash\n"
    assert changed_paths(before, repo_state(repo)) == set()
    transcript = store.read_transcript(record.id)
    assert [s.step for s in transcript.steps] == [0, 1, 2, 3] and transcript.ended_with_answer()
    assert not transcript.dropped_tail

    # Finished, it stays until discarded; discarding removes the worktree, not the transcript.
    assert worktree.is_dir()
    assert frogdesk("sessions", "discard", record.id).returncode == 0
    assert not worktree.exists()
    assert len(store.read_transcript(record.id).steps) == 4
    assert changed_paths(before, repo_state(repo)) == set()


@pytest.mark.slow
def test_every_step_is_on_disk_before_the_next_begins(tmp_path: Path) -> None:
    """Each Bash step counts the steps in the transcript file: all earlier ones are there.

    The commands run at the `none` level with approval off: a confined command cannot read
    FrogDesk's folders at all (tests/attacks/test_own_folders.py), so the one level that
    shows them to a command is the one that can watch the transcript being written."""
    repo = make_user_repo(tmp_path)
    home = tmp_path / "frogdesk-home"
    pattern = '"kind": *"step"'
    count = f"cat {home}/data/sessions/*/transcript.jsonl | grep -c '{pattern}'; true"
    replies = [reply(f"Count {i}.", call("Bash", command=count)) for i in range(3)]
    replies.append(reply("Done.", answer="ok"))
    script = write_script(tmp_path / "script.jsonl", replies)
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "frogdesk", "run", "Count.", "--repo", str(repo),
         "--script", str(script), "--output", str(out), "--json", "--sandbox", "none"],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "FROGDESK_HOME": str(home), "FROGDESK_BASH_APPROVAL": "never"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert list(home.glob("data/sessions/*/transcript.jsonl")), sorted(home.rglob("*"))
    traj = json.loads((out / "trajectory_seed-0.json").read_text(encoding="utf-8"))
    counts = [s["observations"][0]["observation"] for s in traj["steps"][:3]]
    assert [c.split("\n")[2] for c in counts] == ["0", "1", "2"], counts
