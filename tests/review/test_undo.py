"""Undo: exact bytes, modes and deleted files come back; a later user edit makes undo refuse."""

from __future__ import annotations

import os
from pathlib import Path

from frogdesk.review.apply import apply_hunks
from frogdesk.review.diff import compute_diff
from frogdesk.review.undo import latest_record, load_records, undo_apply
from tests.support.review_helpers import MakeSession, repo_fingerprint


def test_undo_restores_exact_bytes_modes_and_deleted_files(
    user_repo: Path, make_session: MakeSession, tmp_path: Path
) -> None:
    (user_repo / "b.txt").write_bytes(b"alpha\r\nbeta\r\ngamma")  # uncommitted, CRLF, no final LF
    (user_repo / "run.sh").write_bytes(b"#!/bin/sh\n")
    (user_repo / "run.sh").chmod(0o755)
    wt = make_session(user_repo)
    (wt.path / "b.txt").write_bytes(b"alpha\r\nBETA\r\ngamma")
    (wt.path / "run.sh").chmod(0o644)
    (wt.path / "src" / "m.py").unlink()
    (wt.path / "deep" / "er").mkdir(parents=True)
    (wt.path / "deep" / "er" / "n.txt").write_bytes(b"n\n")
    diff = compute_diff(wt.path, wt.base_commit)
    before = repo_fingerprint(user_repo)
    session_dir = tmp_path / "session"
    result = apply_hunks(user_repo, wt.path, diff, diff.hunk_ids(), session_dir=session_dir)
    assert result.applied
    assert (user_repo / "b.txt").read_bytes() == b"alpha\r\nBETA\r\ngamma"
    assert not os.access(user_repo / "run.sh", os.X_OK)
    assert not (user_repo / "src").exists()  # emptied by the deletion, removed like git does
    found = latest_record(tmp_path, None)
    assert found is not None and found[0] == session_dir
    undone = undo_apply(*found)
    assert undone.ok, undone.report()
    assert repo_fingerprint(user_repo) == before
    assert load_records(session_dir)[0].undone
    assert latest_record(tmp_path, None) is None


def test_undo_refuses_after_a_later_user_edit(
    user_repo: Path, make_session: MakeSession, tmp_path: Path
) -> None:
    wt = make_session(user_repo)
    (wt.path / "b.txt").write_bytes(b"alpha\nBETA\ngamma\n")
    (wt.path / "c.txt").write_bytes(b"c\n")
    diff = compute_diff(wt.path, wt.base_commit)
    session_dir = tmp_path / "s"
    assert apply_hunks(user_repo, wt.path, diff, diff.hunk_ids(), session_dir=session_dir).applied
    (user_repo / "b.txt").write_bytes(b"alpha\nBETA\ngamma\nmine\n")
    after_edit = repo_fingerprint(user_repo)
    record = load_records(session_dir)[0]
    result = undo_apply(session_dir, record)
    assert not result.ok
    assert result.refused == ["b.txt"]
    assert "b.txt" in result.report() and "nothing was restored" in result.report()
    assert repo_fingerprint(user_repo) == after_edit
    assert not load_records(session_dir)[0].undone


def test_latest_record_picks_newest_across_sessions(
    user_repo: Path, make_session: MakeSession, tmp_path: Path
) -> None:
    roots = tmp_path / "sessions"
    for name, path in (("one", "x.txt"), ("two", "y.txt")):
        wt = make_session(user_repo)
        (wt.path / path).write_bytes(name.encode())
        diff = compute_diff(wt.path, wt.base_commit)
        apply_hunks(
            user_repo, wt.path, diff, diff.hunk_ids(), session_dir=roots / name, session_id=name
        )
    found = latest_record(roots, None)
    assert found is not None and found[1].session_id == "two"
    found_one = latest_record(roots, "one")
    assert found_one is not None and found_one[1].files[0].path == "x.txt"
    assert undo_apply(*found).ok and not (user_repo / "y.txt").exists()
    assert (user_repo / "x.txt").read_bytes() == b"one"
