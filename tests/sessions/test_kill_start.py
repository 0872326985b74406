"""SIGKILL `frogdesk run` at every file-changing step of a session's start: the next command
finds a whole session (listed, with its task, resumable) or nothing at all, never a worktree
registered in the user's repository that no session owns, a damaged session, or a session
whose model would run without its system prompt and task."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from frogdesk.cli import main
from frogdesk.engine.chat import Message
from frogdesk.leaf.records import StepRecord
from frogdesk.paths import AppPaths
from frogdesk.sessions.parts import STALE_AFTER
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.store import SessionStore
from frogdesk.worktree.checkout import SIDECAR_SUFFIX, create_worktree, load_worktree
from tests.support.killpoint import killed_at, let_time_pass, run_frogdesk, trace
from tests.support.scripted import call, git, make_repo, write_script

TASK = "Fix add() in calc.py."
EDIT_TEMP = re.compile(r"\.calc\.py\.[0-9]+-[0-9a-f]{8}\.tmp")


def _script(tmp_path: Path) -> Path:
    return write_script(
        tmp_path / "script.jsonl",
        [
            "Fix it.\n</think>\n\n"
            + call(
                "Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b"
            ),
            "Done.\n</think>\n\nFixed add().",
        ],
    )


def _registered(repo: Path, home: Path) -> set[str]:
    """The worktrees of this FrogDesk home registered in the user's repository."""
    out = git(repo, "worktree", "list", "--porcelain")
    paths = {
        line.removeprefix("worktree ") for line in out.splitlines() if line.startswith("worktree ")
    }
    return {p for p in paths if p.startswith(str(home.resolve()))}


def _listed(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> list[dict[str, object]]:
    """`frogdesk sessions list --json` (run in this process: it is the command after a crash)."""
    monkeypatch.setenv("FROGDESK_HOME", str(home))
    capsys.readouterr()
    assert main(["sessions", "list", "--json"]) == 0
    rows: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    return rows


def _assert_whole_or_nothing(
    repo: Path, home: Path, rows: list[dict[str, object]], where: str
) -> None:
    """Every session listed is whole; nothing else is left, registered or hidden."""
    paths = AppPaths(home / "config", home / "data", home / "cache", home / "state")
    assert all(row["status"] != "damaged" for row in rows), (where, rows)
    ids = {str(row["id"]) for row in rows}
    assert _registered(repo, home) == {str(row["worktree"]) for row in rows}, where
    store = SessionStore(paths.sessions_dir)
    for session_id in ids:
        opening = store.read_transcript(session_id).messages
        assert [m.role for m in opening] == ["system", "user"], where
        assert opening[1].content == TASK, where
    sessions = set(_names(paths.sessions_dir))
    assert sessions == ids, where  # nothing hidden half-made is left either
    kept = {f"{i}{suffix}" for i in ids for suffix in ("", SIDECAR_SUFFIX, ".sandbox")}
    assert {n for n in _names(paths.worktrees_dir) if not n.endswith(".tmp")} <= kept, where
    # and no temp file of a killed write once its writer is surely gone
    assert [p for p in (home / "data").rglob("*") if p.name.endswith(".tmp")] == [], where


def _names(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir()] if folder.exists() else []


def _resumes_with_its_task(home: Path, session_id: str, out: Path) -> None:
    done = run_frogdesk(["sessions", "resume", session_id, "--json", "--output", str(out)], home)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["files_changed"] == ["calc.py"]
    trajectory = json.loads((out / "trajectory_seed-0.json").read_text(encoding="utf-8"))
    roles = [m["role"] for m in trajectory["messages"]]
    assert roles[:2] == ["system", "user"] and trajectory["messages"][1]["content"] == TASK


@pytest.mark.slow
def test_a_start_killed_at_any_step_leaves_a_whole_session_or_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path)
    args = ["run", TASK, "--repo", str(repo), "--script", str(_script(tmp_path)), "--json"]
    ops = trace(args, tmp_path / "trace-home")
    first_edit = next(i for i, op in enumerate(ops) if EDIT_TEMP.search(op))  # the start is over
    resumed_first = False
    for n in range(1, first_edit + 1):
        home = tmp_path / f"home-{n}"
        op = killed_at(args, home, n)
        let_time_pass(home, 120)
        rows = _listed(home, monkeypatch, capsys)
        _assert_whole_or_nothing(repo, home, rows, op)
        if (rows and not resumed_first) or n == first_edit:
            resumed_first = True
            _resumes_with_its_task(home, str(rows[0]["id"]), tmp_path / f"out-{n}")
    assert resumed_first


def _old_start(repo: Path, name: str, script: Path) -> SessionRecord:
    """What an older FrogDesk killed mid-start left: a worktree and a record, no opening."""
    wt = create_worktree(repo, AppPaths.default().worktrees_dir, name)
    record = SessionRecord(name, str(repo), str(wt.path), wt.base_commit, TASK, str(script))
    record.backend = "script"
    SessionStore(AppPaths.default().sessions_dir).create(record)
    return record


@pytest.mark.slow
def test_a_session_stored_before_its_opening_gets_it_when_resumed(
    tmp_path: Path, isolated_home: Path
) -> None:
    repo = make_repo(tmp_path)
    script = _script(tmp_path)
    store = SessionStore(AppPaths.default().sessions_dir)
    for name, system_written in (
        ("20260101-000000-aaaaaa", False),
        ("20260101-000000-bbbbbb", True),
    ):
        _old_start(repo, name, script)
        if system_written:  # killed between the two opening lines
            store.append_message(name, Message("system", "the system prompt"))
        out = tmp_path / f"out-{name}"
        done = run_frogdesk(
            ["sessions", "resume", name, "--json", "--output", str(out)], isolated_home
        )
        assert done.returncode == 0, done.stderr
        messages = json.loads((out / "trajectory_seed-0.json").read_text(encoding="utf-8"))[
            "messages"
        ]
        assert [m["role"] for m in messages[:3]] == ["system", "user", "assistant"]
        assert messages[1]["content"] == TASK


def test_steps_without_their_opening_are_refused_with_a_way_out(
    tmp_path: Path, isolated_home: Path
) -> None:
    record = _old_start(make_repo(tmp_path), "20260101-000000-cccccc", _script(tmp_path))
    step = StepRecord(0, Message("assistant", "hm"), (), None, 0.0, 0.0, "stop")
    SessionStore(AppPaths.default().sessions_dir).append_step(record.id, step)
    done = run_frogdesk(["sessions", "resume", record.id], isolated_home)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "opening messages (system prompt, task) are missing" in line, line
    assert f"frogdesk sessions discard {record.id}" in line, line


def _age(sidecar: Path) -> None:
    let_time_pass(sidecar, STALE_AFTER + 60)


def test_a_worktree_an_older_start_left_without_a_session_is_removed(
    tmp_path: Path, isolated_home: Path
) -> None:
    repo = make_repo(tmp_path)
    paths = AppPaths.default()
    paths.sessions_dir.mkdir(parents=True)
    orphan = create_worktree(repo, paths.worktrees_dir, "20260101-000000-dddddd")
    worked = create_worktree(repo, paths.worktrees_dir, "20260101-000000-eeeeee")
    (worked.path / "calc.py").write_text("changed by the model\n", encoding="utf-8")
    young = create_worktree(repo, paths.worktrees_dir, "20260101-000000-ffffff")
    for wt in (orphan, worked):
        _age(paths.worktrees_dir / (wt.name + SIDECAR_SUFFIX))

    done = run_frogdesk(["sessions", "list"], isolated_home)
    assert done.returncode == 0, done.stderr
    registered = git(repo, "worktree", "list", "--porcelain")
    assert str(orphan.path) not in registered and not orphan.path.exists()
    assert not (paths.worktrees_dir / (orphan.name + SIDECAR_SUFFIX)).exists()
    # work the model did, and a worktree perhaps being made right now, are kept
    assert load_worktree(paths.worktrees_dir, worked.name).path == worked.path
    assert load_worktree(paths.worktrees_dir, young.name).path == young.path
