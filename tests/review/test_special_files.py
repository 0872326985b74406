"""Special files review and apply byte-exactly: binary, CRLF, no final newline, non-UTF-8, huge."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from frogdesk.review.apply import apply_hunks
from frogdesk.review.diff import compute_diff
from tests.support.review_helpers import MakeSession, git

BASE = {
    "bin.dat": bytes(range(256)) * 4,
    "crlf.txt": b"".join(b"row %d\r\n" % i for i in range(30)),
    "open.txt": b"one\ntwo\nthree",
    "latin.txt": "caf\xe9\nna\xefve\nstra\xdfe\n".encode("latin-1") * 5,
    "big.txt": b"".join(b"old %d\n" % i for i in range(5000)),
}
NEW = {
    "bin.dat": bytes(reversed(range(256))) * 4 + b"\0tail",
    "crlf.txt": BASE["crlf.txt"]
    .replace(b"row 3\r\n", b"ROW 3\r\n")
    .replace(b"row 25\r\n", b"row 25"),
    "open.txt": b"one\nTWO\nthree\nfour",
    "latin.txt": BASE["latin.txt"].replace(
        "na\xefve".encode("latin-1"), "NA\xcfVE".encode("latin-1")
    ),
    "big.txt": b"".join(b"new %d\n" % i if i % 2 else b"old %d\n" % i for i in range(5000)),
}


@pytest.fixture
def special_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "special"
    repo.mkdir()
    git(repo, "init", "-q")
    for name, data in BASE.items():
        (repo / name).write_bytes(data)
    (repo / "link").symlink_to("crlf.txt")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    return repo


def test_special_files_review_and_apply_exactly(
    special_repo: Path, make_session: MakeSession
) -> None:
    wt = make_session(special_repo)
    for name, data in NEW.items():
        (wt.path / name).write_bytes(data)
    (wt.path / "link").unlink()
    (wt.path / "link").symlink_to("open.txt")
    (wt.path / "added.bin").write_bytes(b"\0\1\2")
    diff = compute_diff(wt.path, wt.base_commit)
    by_path = {c.path: c for c in diff.files}
    assert by_path["bin.dat"].status == "binary" and by_path["bin.dat"].binary
    assert [h.kind for h in by_path["bin.dat"].hunks] == ["content"]
    assert by_path["added.bin"].status == "added" and by_path["added.bin"].binary
    assert len(by_path["crlf.txt"].hunks) == 2
    assert by_path["big.txt"].status == "modified"
    assert sum(h.added for h in by_path["big.txt"].hunks) == 2500
    assert sum(h.removed for h in by_path["big.txt"].hunks) == 2500
    assert by_path["open.txt"].hunks[0].new_lines[-1] == b"four"
    assert [h.header for h in by_path["link"].hunks] == ["symlink changed"]
    result = apply_hunks(special_repo, wt.path, diff, diff.hunk_ids())
    assert result.applied, result.report()
    for name, data in NEW.items():
        assert (special_repo / name).read_bytes() == data, name
    assert os.readlink(special_repo / "link") == "open.txt"
    assert (special_repo / "added.bin").read_bytes() == b"\0\1\2"


def test_partial_crlf_and_missing_newline(special_repo: Path, make_session: MakeSession) -> None:
    wt = make_session(special_repo)
    (wt.path / "crlf.txt").write_bytes(NEW["crlf.txt"])
    diff = compute_diff(wt.path, wt.base_commit)
    (first, last) = diff.files[0].hunks
    assert apply_hunks(special_repo, wt.path, diff, [last.id]).applied
    assert (special_repo / "crlf.txt").read_bytes() == BASE["crlf.txt"].replace(
        b"row 25\r\n", b"row 25"
    )
    assert first.id not in {last.id}


def test_binary_changed_by_both_conflicts(special_repo: Path, make_session: MakeSession) -> None:
    wt = make_session(special_repo)
    (wt.path / "bin.dat").write_bytes(NEW["bin.dat"])
    diff = compute_diff(wt.path, wt.base_commit)
    (special_repo / "bin.dat").write_bytes(b"\0user")
    result = apply_hunks(special_repo, wt.path, diff, diff.hunk_ids())
    assert not result.applied and "binary" in result.report()
    assert (special_repo / "bin.dat").read_bytes() == b"\0user"


def test_a_name_that_is_not_utf8_applies_and_undoes(
    special_repo: Path, make_session: MakeSession, tmp_path: Path
) -> None:
    """Bash in the sandbox can make any byte string a file name; apply records it exactly
    (the journal and record are ASCII JSON) and undo takes it back. The control: a plain
    name beside it goes the same way."""
    from frogdesk.review.records import load_records
    from frogdesk.review.undo import undo_apply

    wt = make_session(special_repo)
    odd = os.fsdecode(b"caf\xe9-\xff.txt")
    (wt.path / odd).write_bytes(b"data\n")
    (wt.path / "plain.txt").write_bytes(b"plain\n")
    diff = compute_diff(wt.path, wt.base_commit)
    assert {c.path for c in diff.files} == {odd, "plain.txt"}
    session_dir = tmp_path / "session"
    result = apply_hunks(
        special_repo, wt.path, diff, diff.hunk_ids(), session_dir=session_dir, session_id="s"
    )
    assert result.applied, result.report()
    assert (special_repo / odd).read_bytes() == b"data\n"
    undone = undo_apply(session_dir, load_records(session_dir)[-1])
    assert undone.ok, undone.report()
    assert not (special_repo / odd).exists() and not (special_repo / "plain.txt").exists()


def test_an_apply_report_shows_one_line_per_file() -> None:
    """A name with a newline cannot print a line of its own (`frogdesk: all undone`)."""
    from frogdesk.review.apply import ApplyResult

    report = ApplyResult(True, written=["a\nfrogdesk: all undone.txt", "b.txt"]).report()
    lines = report.splitlines()
    assert lines[0].startswith("applied 2 files at ")
    assert lines[1:] == ["  a\\nfrogdesk: all undone.txt", "  b.txt"]
