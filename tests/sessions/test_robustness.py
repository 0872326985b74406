"""Sessions under a full disk, with a task that is not UTF-8, and resumed with raised limits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from frogdesk.config import Settings
from frogdesk.engine.chat import Backend, Message
from frogdesk.leaf.records import StepRecord
from frogdesk.paths import AppPaths
from frogdesk.sessions.errors import StoreWriteError
from frogdesk.sessions.record import SessionRecord, SessionSpec
from frogdesk.sessions.service import SessionService
from frogdesk.sessions.store import SessionStore, atomic_write
from tests.support.scripted import call, fingerprint, make_repo, write_script


def cli(
    *args: bytes | str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """The real `frogdesk` command; bytes arguments go to argv as they are."""
    argv = [sys.executable.encode(), b"-m", b"frogdesk"]
    argv += [a if isinstance(a, bytes) else os.fsencode(a) for a in args]
    return subprocess.run(argv, capture_output=True, timeout=300, check=False, env=env)


def frogdesk_lines(done: subprocess.CompletedProcess[bytes]) -> list[str]:
    """The `frogdesk:` lines on stderr, without warnings (running as root is one)."""
    text = done.stderr.decode("utf-8", "replace")
    assert "Traceback" not in text, text
    lines = text.splitlines()
    return [x for x in lines if x.startswith("frogdesk: ") and not x.startswith("frogdesk: warn")]


def fill(folder: Path) -> Path:
    """Fill the file system of `folder` to the last byte; the filler file's path."""
    filler = folder / "filler.bin"
    with open(filler, "wb", buffering=0) as handle:
        chunk = b"\0" * 65536
        while True:
            try:
                handle.write(chunk)
            except OSError:
                break
        while True:
            try:
                if not handle.write(b"\0"):
                    break
            except OSError:
                break
    return filler


def reply(thought: str, tool: str = "", answer: str = "") -> str:
    return f"{thought}\n</think>\n\n{tool or answer}"


def step(index: int, text: str) -> StepRecord:
    return StepRecord(index, Message("assistant", text), (), None, 0.0, 0.0, "stop")


# full disk ----------------------------------------------------------------------------


def test_a_transcript_line_that_does_not_fit_is_not_left_half_written(small_disk: Path) -> None:
    store = SessionStore(small_disk / "sessions")
    record = store.create(SessionRecord("s1", "/r", "/w", "c0", "task", "m"))
    store.append_step("s1", step(0, "first"))
    path = store.session_dir("s1") / "transcript.jsonl"
    before = path.read_bytes()
    filler = fill(small_disk)
    filler.write_bytes(filler.read_bytes()[:-200_000])  # room for some, not all of the line
    with pytest.raises(StoreWriteError) as caught:
        store.append_step("s1", step(1, "x" * 1_000_000))
    assert caught.value.path == path and "disk is full" in str(caught.value)
    assert path.read_bytes() == before
    record_before = (store.session_dir("s1") / "session.json").read_bytes()
    fill(small_disk / "sessions")
    record.task = "changed"
    with pytest.raises(StoreWriteError):
        store.update(record)
    assert (store.session_dir("s1") / "session.json").read_bytes() == record_before
    assert sorted(p.name for p in store.session_dir("s1").iterdir()) == [
        "session.json",
        "transcript.jsonl",
    ]  # no temporary file left
    filler.unlink()
    (small_disk / "sessions" / "filler.bin").unlink()
    store.append_step("s1", step(1, "second"))
    assert [s.step for s in store.read_transcript("s1").steps] == [0, 1]


def test_an_unencodable_record_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "session.json"
    atomic_write(target, "old")
    with pytest.raises(UnicodeEncodeError):
        atomic_write(target, "new \udcff")
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["session.json"]


@pytest.mark.slow
def test_run_on_a_full_disk_stops_with_one_line_and_resumes(
    tmp_path: Path, small_disk: Path, sandboxed_bash: str
) -> None:
    repo = make_repo(tmp_path)
    before = fingerprint(repo)
    script = write_script(
        tmp_path / "s.jsonl",
        [
            reply("Note.", call("Write", file_path="note.txt", content="kept")),
            reply("Fill.", call("Bash", command="cat /dev/zero > fill.bin; echo full")),
            reply("Look.", call("Read", file_path="note.txt")),
            reply("Done.", answer="All done."),
        ],
    )
    # The disk fills up under FrogDesk's own session write. A command is stopped before it
    # can do that itself (tests/attacks/test_limits.py); another program on the same disk
    # cannot be, which is what the fill stands in for here, with the command's limits off.
    env = {
        **os.environ,
        "FROGDESK_HOME": str(small_disk),
        "FROGDESK_SANDBOX_DISK_RESERVE": "0",
        "FROGDESK_SESSION_DISK_CAP": "0",
    }
    done = cli("run", "Fill it.", "--repo", str(repo), "--script", str(script), env=env)
    [line] = frogdesk_lines(done)
    assert done.returncode == 2, line
    store = SessionStore(small_disk / "data" / "sessions")
    [record] = store.list()
    assert "disk is full" in line and str(store.session_dir(record.id)) in line, line
    assert f"frogdesk sessions resume {record.id}" in line, line
    assert fingerprint(repo) == before
    transcript = store.read_transcript(record.id)
    assert not transcript.dropped_tail
    assert [s.step for s in transcript.steps][:1] == [0]
    assert (Path(record.worktree) / "note.txt").read_text(encoding="utf-8") == "kept"
    listed = cli("sessions", "list", "--json", env=env)
    [row] = json.loads(listed.stdout)
    assert row["id"] == record.id and row["status"] == "interrupted"

    (Path(record.worktree) / "fill.bin").unlink()
    resumed = cli("sessions", "resume", record.id, "--json", env=env)
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert json.loads(resumed.stdout)["exit_reason"] == "agent"
    assert fingerprint(repo) == before


# task text that is not UTF-8 ----------------------------------------------------------


def test_a_task_that_is_not_utf8_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    before = fingerprint(repo)
    script = write_script(tmp_path / "s.jsonl", [reply("x", answer="ok")])
    done = cli("run", b"fix \xff\xfe this", "--repo", str(repo), "--script", str(script))
    [line] = frogdesk_lines(done)
    assert done.returncode == 2
    assert "not valid UTF-8" in line and "0xff 0xfe" in line and "character 4" in line, line
    paths = AppPaths.default()
    assert not paths.sessions_dir.exists() or not any(paths.sessions_dir.iterdir())
    assert not paths.worktrees_dir.exists() or not any(paths.worktrees_dir.iterdir())
    assert fingerprint(repo) == before


def test_a_start_that_fails_after_the_worktree_removes_it_even_on_a_full_disk(
    tmp_path: Path, small_disk: Path
) -> None:
    repo = make_repo(tmp_path)
    paths = AppPaths(small_disk / "config", small_disk / "data", small_disk / "cache")

    def failing_backend(
        record: SessionRecord, settings: Settings, replies_done: int = 0
    ) -> Backend:
        fill(small_disk)  # the failure handler's own writes now fail too
        raise RuntimeError("backend exploded")

    service = SessionService(paths, Settings.of(sandbox="none"), backend_factory=failing_backend)
    with pytest.raises(RuntimeError, match="backend exploded"):
        service.start(SessionSpec("task", repo, backend="script", script="x.jsonl"))
    leftover = [p for p in paths.worktrees_dir.iterdir() if p.is_dir()]
    listed = {r.id for r in service.store.list() if r.status != "discarded"}
    assert {p.name for p in leftover} <= listed
    assert leftover == []
    assert "frogdesk-" not in subprocess.run(
        ["git", "worktree", "list"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.replace(str(repo), "")


# resume with raised limits ------------------------------------------------------------


@pytest.mark.slow
def test_resume_with_raised_limits_goes_on_and_records_them(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    replies = [reply(f"Look {i}.", call("Read", file_path="calc.py")) for i in range(3)]
    script = write_script(tmp_path / "s.jsonl", [*replies, reply("Done.", answer="Looked.")])
    first = cli("run", "Look.", "--repo", str(repo), "--script", str(script), "--json",
                "--max-steps", "2")  # fmt: skip
    assert json.loads(first.stdout)["exit_reason"] == "max_turns", first.stderr.decode()
    store = SessionStore(AppPaths.default().sessions_dir)
    [record] = store.list()

    again = cli("sessions", "resume", record.id, "--json")
    assert json.loads(again.stdout)["exit_reason"] == "max_turns"  # the recorded limit holds
    assert store.get(record.id).n_steps == 2

    bad = cli("sessions", "resume", record.id, "--max-steps", "0")
    [line] = frogdesk_lines(bad)
    assert bad.returncode == 2 and "max_steps" in line, line

    raised = cli("sessions", "resume", record.id, "--json", "--max-steps", "10",
                 "--max-time", "600")  # fmt: skip
    summary = json.loads(raised.stdout)
    assert summary["exit_reason"] == "agent", raised.stderr.decode()
    assert summary["n_steps"] == 4
    stored = store.get(record.id)
    assert stored.settings["max_steps"] == 10 and stored.settings["max_time"] == 600
    assert [s.step for s in store.read_transcript(record.id).steps] == [0, 1, 2, 3]


# continue a finished session with a message -------------------------------------------


def test_a_finished_session_continues_from_the_cli_with_a_message(tmp_path: Path) -> None:
    """What the TUI does with a new message, `sessions resume -m` does: a new user turn."""
    repo = make_repo(tmp_path)
    script = write_script(tmp_path / "s.jsonl", [
        reply("Look.", call("Read", file_path="calc.py")), reply("Done.", answer="Looked."),
        reply("Again.", call("Read", file_path="calc.py")), reply("Done.", answer="Twice."),
    ])  # fmt: skip
    first = cli("run", "Look.", "--repo", str(repo), "--script", str(script), "--json")
    assert json.loads(first.stdout)["exit_reason"] == "agent", first.stderr.decode()
    store = SessionStore(AppPaths.default().sessions_dir)
    [record] = store.list()
    before = store.read_transcript(record.id)

    # Without a message there is nothing to continue: one line, nothing written.
    refused = cli("sessions", "resume", record.id)
    [line] = frogdesk_lines(refused)
    assert refused.returncode == 2 and "final answer" in line, line
    empty = cli("sessions", "resume", record.id, "--message", "  ")
    [line] = frogdesk_lines(empty)
    assert empty.returncode == 2 and "empty message" in line, line
    assert store.read_transcript(record.id) == before

    went_on = cli("sessions", "resume", record.id, "--json", "-m", "Read it once more.")
    summary = json.loads(went_on.stdout)
    assert summary["exit_reason"] == "agent", went_on.stderr.decode()
    after = store.read_transcript(record.id)
    assert [s.step for s in after.steps] == [0, 1, 2, 3]
    assert after.steps[:2] == before.steps and after.messages == before.messages
    [followup] = after.followups
    assert followup.before_step == 2 and followup.message == Message("user", "Read it once more.")
    assert after.steps[-1].assistant.content.endswith("Twice.")
