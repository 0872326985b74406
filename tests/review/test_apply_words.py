"""Apply and undo name an apply by its time and file count, never by its internal record id."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from frogdesk.cli import main
from frogdesk.paths import AppPaths
from frogdesk.review.records import apply_time, count_files, load_records
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.store import SessionStore
from tests.support.review_helpers import MakeSession


def test_apply_then_undo_say_time_and_files_not_the_record_id(
    user_repo: Path, make_session: MakeSession, capsys: pytest.CaptureFixture[str]
) -> None:
    wt = make_session(user_repo)
    SessionStore(AppPaths.default().sessions_dir).create(
        SessionRecord("s-words", str(user_repo), str(wt.path), wt.base_commit, task="t", model="m")
    )
    (wt.path / "b.txt").write_bytes(b"alpha\nBETA\ngamma\n")
    (wt.path / "n.txt").write_bytes(b"n\n")
    (wt.path / "m.txt").write_bytes(b"m\n")
    assert main(["apply", "s-words", "--all"]) == 0
    applied = capsys.readouterr().out
    [record] = load_records(AppPaths.default().sessions_dir / "s-words")
    when = time.strftime("%H:%M", time.localtime(record.created_at))
    assert f"applied 3 files at {when}" in applied.splitlines(), applied
    assert main(["undo"]) == 0
    undone = capsys.readouterr().out
    assert undone.splitlines()[0] == f"undid the apply of {when} (3 files)", undone
    for text in (applied, undone):
        assert record.id not in text and "from apply" not in text
        assert not re.search(r"\d{12,}", text)  # no record id of any shape


def test_an_older_apply_names_its_day_and_counts_read_as_words() -> None:
    now = time.mktime((2026, 12, 2, 14, 30, 0, 0, 0, -1))
    assert apply_time(now - 60, now) == "14:29"
    assert apply_time(now - 86400, now) == "2026-12-01 14:30"
    assert (count_files(1), count_files(0), count_files(3)) == ("1 file", "0 files", "3 files")
