"""Damaged sessions, broken worktrees and closed pipes: one clear line each, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from frogdesk.cli import main
from frogdesk.engine.chat import Message
from frogdesk.paths import AppPaths
from frogdesk.sessions.errors import SessionDamagedError
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.store import DAMAGED_LINES_FILE, TRANSCRIPT_FILE, SessionStore
from frogdesk.worktree.checkout import create_worktree
from tests.support.review_helpers import git


@pytest.fixture
def store() -> SessionStore:
    return SessionStore(AppPaths.default().sessions_dir)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("a\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    return root


def _session(store: SessionStore, repo: Path, tmp_path: Path, sid: str) -> SessionRecord:
    wt = create_worktree(repo, tmp_path / "worktrees", sid)
    record = SessionRecord(sid, str(repo), str(wt.path), wt.base_commit, task="t", model="m")
    return store.create(record)


def test_a_corrupt_record_is_listed_as_damaged_and_named_by_every_command(
    store: SessionStore, repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _session(store, repo, tmp_path, "good-1")
    _session(store, repo, tmp_path, "bad-1")
    (store.session_dir("bad-1") / "session.json").write_text('{"id": "bad-1", "repo"')
    assert main(["sessions", "list"]) == 0
    out = capsys.readouterr().out
    assert "good-1" in out  # the readable session is still listed: the control
    assert "bad-1  damaged: session.json: unreadable (JSONDecodeError" in out
    assert "move " in out and "aside to drop the session" in out
    for argv in (["review", "bad-1"], ["sessions", "resume", "bad-1"], ["apply", "bad", "--all"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert "session bad-1 is damaged:" in err and "session.json" in err, err
    assert main(["sessions", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {"id": "bad-1", "status": "damaged"}.items() <= rows[-1].items()


def test_a_garbage_line_inside_a_transcript_names_the_line_and_repair_keeps_the_rest(
    store: SessionStore, repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _session(store, repo, tmp_path, "tx-1")
    store.append_message("tx-1", Message("system", "sys"))
    path = store.session_dir("tx-1") / TRANSCRIPT_FILE
    with open(path, "ab") as handle:
        handle.write(b"garbage that is not json\n")
    store.append_message("tx-1", Message("user", "task"))
    with pytest.raises(SessionDamagedError) as caught:
        store.read_transcript("tx-1")
    message = str(caught.value)
    assert f"{path}: line 2 is not a transcript entry" in message
    assert "frogdesk sessions repair tx-1" in message
    assert main(["sessions", "resume", "tx-1"]) == 2
    err = capsys.readouterr().err
    assert "line 2 is not a transcript entry" in err and "Traceback" not in err
    assert main(["sessions", "repair", "tx-1"]) == 0
    assert "set 1 unreadable line(s) aside" in capsys.readouterr().out
    assert [m.content for m in store.read_transcript("tx-1").messages] == ["sys", "task"]
    aside = store.session_dir("tx-1") / DAMAGED_LINES_FILE
    assert aside.read_bytes() == b"garbage that is not json\n"  # nothing is lost


def test_a_broken_worktree_names_the_session_and_the_way_out(
    store: SessionStore, repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = _session(store, repo, tmp_path, "wt-1")
    assert main(["review", "wt-1"]) == 0  # control: the intact worktree reviews fine
    capsys.readouterr()
    (Path(record.worktree) / ".git").write_text("gitdir: /nonexistent/nowhere\n")
    assert main(["review", "wt-1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("frogdesk: cannot diff session wt-1") and err.count("\n") == 1
    assert "Traceback" not in err


def test_debug_shows_the_traceback(store: SessionStore, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["review", "nope"]) == 2
    assert "Traceback" not in capsys.readouterr().err
    assert main(["--debug", "review", "nope"]) == 2
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and err.endswith(
        "no session 'nope' (see `frogdesk sessions`)\n"
    )


def test_a_closed_pipe_ends_the_listing_quietly(
    store: SessionStore, repo: Path, tmp_path: Path
) -> None:
    for i in range(3):
        _session(store, repo, tmp_path, f"p-{i}")
    with subprocess.Popen(
        [sys.executable, "-m", "frogdesk", "sessions", "list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # like `| head -0`: the reader is gone before anything is written
        err = proc.stderr.read()
        code = proc.wait()
    assert err == b"", err.decode()
    assert code == 141


def test_a_record_value_of_the_wrong_type_is_damaged_where_it_is_read(
    store: SessionStore, repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _session(store, repo, tmp_path, "typed-1")
    path = store.session_dir("typed-1") / "session.json"
    intact = path.read_text()
    assert main(["review", "typed-1"]) == 0  # control: the intact record reviews
    capsys.readouterr()
    data = json.loads(intact)
    data["worktree"] = 5
    path.write_text(json.dumps(data))
    assert main(["sessions", "list"]) == 0
    assert "typed-1  damaged: session.json: unreadable (RecordTypeError: worktree is a number" in (
        capsys.readouterr().out
    )
    assert main(["review", "typed-1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "session typed-1 is damaged:" in err and "worktree is a number, not text" in err


def test_a_record_whose_id_names_another_folder_is_damaged(
    store: SessionStore, repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _session(store, repo, tmp_path, "moved-1")
    _session(store, repo, tmp_path, "other-1")
    path = store.session_dir("moved-1") / "session.json"
    data = json.loads(path.read_text())
    data["id"] = "../other-1"  # every path of the session derives from its id
    path.write_text(json.dumps(data))
    assert main(["sessions", "list"]) == 0
    out = capsys.readouterr().out
    assert "other-1" in out  # control: the session it names is still listed as itself
    assert "moved-1  damaged: session.json: its id '../other-1' is not its folder's name" in out
    assert main(["sessions", "resume", "moved-1"]) == 2
    assert "session moved-1 is damaged:" in capsys.readouterr().err


@pytest.mark.parametrize(
    "line",
    [
        b'{"kind": "message", "message": {"role": "user", "content": 5}}\n',
        b'{"kind": "message", "message": {"role": "root", "content": "x"}}\n',
        b'{"kind": "followup", "before_step": "1", "message": {"role": "user"}}\n',
        b'{"kind": "step", "step": {"step": 0, "assistant": {"role": "assistant"},'
        b' "usage": {"prompt_tokens": "many"}}}\n',
    ],
)
def test_a_line_of_the_wrong_types_is_damage_and_repair_sets_it_aside(
    store: SessionStore, repo: Path, tmp_path: Path, line: bytes
) -> None:
    _session(store, repo, tmp_path, "ty-1")
    store.append_message("ty-1", Message("system", "sys"))
    path = store.session_dir("ty-1") / TRANSCRIPT_FILE
    with open(path, "ab") as handle:
        handle.write(line)
    store.append_message("ty-1", Message("user", "task"))
    with pytest.raises(SessionDamagedError, match="line 2 is not a transcript entry"):
        store.read_transcript("ty-1")
    assert store.repair_damaged_lines("ty-1") == 1
    assert [m.content for m in store.read_transcript("ty-1").messages] == ["sys", "task"]
    assert (store.session_dir("ty-1") / DAMAGED_LINES_FILE).read_bytes() == line
