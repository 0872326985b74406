"""The review, apply and undo commands through the real CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frogdesk.cli import main
from frogdesk.paths import AppPaths
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.store import SessionStore
from tests.support.review_helpers import MakeSession, repo_fingerprint


def _session(repo: Path, make_session: MakeSession, sid: str) -> Path:
    wt = make_session(repo)
    SessionStore(AppPaths.default().sessions_dir).create(
        SessionRecord(sid, str(repo), str(wt.path), wt.base_commit, task="t", model="m")
    )
    return wt.path


def test_review_json_apply_hunks_and_undo(
    user_repo: Path, make_session: MakeSession, capsys: pytest.CaptureFixture[str]
) -> None:
    wt = _session(user_repo, make_session, "sess-1")
    (wt / "b.txt").write_bytes(b"alpha\nBETA\ngamma\n")
    (wt / "n.txt").write_bytes(b"n\n")
    before = repo_fingerprint(user_repo)
    assert main(["review", "sess-1", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["session_id"] == "sess-1"
    assert [(f["path"], f["status"]) for f in payload["files"]] == [
        ("b.txt", "modified"),
        ("n.txt", "added"),
    ]
    hunk = payload["files"][0]["hunks"][0]
    assert set(hunk) == {"id", "header", "added", "removed", "decision", "edited", "lines"}
    assert hunk["edited"] is False
    assert hunk["lines"] == [" alpha", "-beta", "+BETA", " gamma"]
    assert (hunk["added"], hunk["removed"], hunk["decision"]) == (1, 1, "pending")
    assert repo_fingerprint(user_repo) == before

    assert main(["apply", "sess", "--hunks", hunk["id"]]) == 0
    assert "applied 1 file at " in capsys.readouterr().out
    assert (user_repo / "b.txt").read_bytes() == b"alpha\nBETA\ngamma\n"
    assert not (user_repo / "n.txt").exists()
    assert main(["review", "sess-1", "--json"]) == 0
    decided = json.loads(capsys.readouterr().out)["files"][0]["hunks"][0]["decision"]
    assert decided == "approved"

    assert main(["undo"]) == 0
    assert "undid the apply of " in capsys.readouterr().out
    assert repo_fingerprint(user_repo) == before
    assert main(["undo"]) == 2
    assert "nothing to undo" in capsys.readouterr().err


def test_apply_files_conflict_exit_code_and_text_review(
    user_repo: Path, make_session: MakeSession, capsys: pytest.CaptureFixture[str]
) -> None:
    wt = _session(user_repo, make_session, "s2")
    (wt / "b.txt").write_bytes(b"alpha\nBETA\ngamma\n")
    assert main(["review", "s2"]) == 0
    text = capsys.readouterr().out
    assert "modified   b.txt" in text and "pending" in text
    (user_repo / "b.txt").write_bytes(b"alpha\nuser\ngamma\n")
    assert main(["apply", "s2", "--files", "b.txt"]) == 1
    err = capsys.readouterr().err
    assert "b.txt lines 1-3" in err and "nothing was written" in err
    assert (user_repo / "b.txt").read_bytes() == b"alpha\nuser\ngamma\n"


def test_user_errors(
    user_repo: Path, make_session: MakeSession, capsys: pytest.CaptureFixture[str]
) -> None:
    wt = _session(user_repo, make_session, "s3")
    (wt / "b.txt").write_bytes(b"x\n")
    assert main(["review", "nope"]) == 2
    assert "no session 'nope'" in capsys.readouterr().err
    assert main(["apply", "s3", "--hunks", "deadbeef0000"]) == 2
    assert "no hunk deadbeef0000" in capsys.readouterr().err
    assert main(["apply", "s3", "--files", "zzz"]) == 2
    assert "does not change zzz" in capsys.readouterr().err
    assert main(["undo", "s3"]) == 2
    with pytest.raises(SystemExit):
        main(["apply", "s3"])  # one of --all, --hunks, --files is required


def test_apply_all_with_commit(
    user_repo: Path, make_session: MakeSession, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.support.review_helpers import git

    wt = _session(user_repo, make_session, "s4")
    (wt / "c.txt").write_bytes(b"c\n")
    assert main(["apply", "s4", "--all", "--commit", "add c"]) == 0
    assert "committed as" in capsys.readouterr().out
    assert git(user_repo, "log", "-1", "--format=%s").strip() == "add c"
    assert git(user_repo, "status", "--porcelain") == ""


def test_a_damaged_apply_record_is_named_and_undo_touches_nothing(
    user_repo: Path, make_session: MakeSession, capsys: pytest.CaptureFixture[str]
) -> None:
    wt = _session(user_repo, make_session, "rec-1")
    (wt / "b.txt").write_bytes(b"alpha\nBETA\ngamma\n")
    assert main(["apply", "rec-1", "--all"]) == 0
    applied = repo_fingerprint(user_repo)
    capsys.readouterr()
    session_dir = AppPaths.default().sessions_dir / "rec-1"
    (path,) = session_dir.glob("applies/*/record.json")
    intact = path.read_text()
    data = json.loads(intact)
    data["files"][0]["before"] = {"sha256": 7, "mode": "100644"}
    path.write_text(json.dumps(data))
    assert main(["undo"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert str(path) in err and "files[0].before.sha256 is a number, not text" in err, err
    assert repo_fingerprint(user_repo) == applied
    path.write_text(intact)  # control: the same record, intact, undoes
    assert main(["undo"]) == 0
    assert (user_repo / "b.txt").read_bytes() == b"alpha\nbeta\ngamma\n"


@pytest.mark.parametrize(
    "damage", [b"[]", b'{"hunks": ["approved"]}', b'{"edits": {"h": 3}}', b"\xff{", b"{"]
)
def test_damaged_decisions_are_named_and_nothing_is_touched(
    user_repo: Path, make_session: MakeSession, capsys: pytest.CaptureFixture[str], damage: bytes
) -> None:
    wt = _session(user_repo, make_session, "dec-1")
    (wt / "b.txt").write_bytes(b"alpha\nBETA\ngamma\n")
    path = AppPaths.default().sessions_dir / "dec-1" / "decisions.json"
    path.write_text('{"hunks": {}, "edits": {}, "comment": "keep"}')
    assert main(["review", "dec-1", "--json"]) == 0  # control: intact decisions read
    capsys.readouterr()
    before = repo_fingerprint(user_repo)
    path.write_bytes(damage)
    for argv in (["review", "dec-1", "--json"], ["apply", "dec-1", "--all"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert f"{path} is damaged" in err, err
    assert repo_fingerprint(user_repo) == before
    assert path.read_bytes() == damage  # kept for the user to look at
