"""Apply: approved hunks only, 3-way with the user's edits, atomic refusal on conflicts, commits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from frogdesk.review.apply import apply_hunks
from frogdesk.review.diff import compute_diff
from frogdesk.review.errors import UnknownHunk
from tests.support.review_helpers import MakeSession, git, repo_fingerprint


def _lines(n: int, fmt: bytes = b"line %d\n") -> bytes:
    return b"".join(fmt % i for i in range(1, n + 1))


def test_only_approved_hunks_land_and_user_edits_elsewhere_survive(
    user_repo: Path, make_session: MakeSession
) -> None:
    wt = make_session(user_repo)
    text = _lines(40).replace(b"line 3\n", b"line three\n").replace(b"line 35\n", b"line 35!\n")
    (wt.path / "a.txt").write_bytes(text)
    diff = compute_diff(wt.path, wt.base_commit)
    first, second = diff.files[0].hunks
    # The user edits line 20 after the session began: a region no hunk touches.
    user_text = _lines(40).replace(b"line 20\n", b"user 20\n")
    (user_repo / "a.txt").write_bytes(user_text)
    result = apply_hunks(user_repo, wt.path, diff, [second.id])
    assert result.applied, result.report()
    assert (user_repo / "a.txt").read_bytes() == user_text.replace(b"line 35\n", b"line 35!\n")
    assert first.header.startswith("@@ -1,")


def test_conflict_refuses_writes_nothing_and_names_file_and_lines(
    user_repo: Path, make_session: MakeSession
) -> None:
    wt = make_session(user_repo)
    (wt.path / "a.txt").write_bytes(
        _lines(40).replace(b"line 3\n", b"session 3\n").replace(b"line 30\n", b"session 30\n")
    )
    (wt.path / "b.txt").write_bytes(b"alpha\nBETA\ngamma\n")
    (wt.path / "new.txt").write_bytes(b"new\n")
    diff = compute_diff(wt.path, wt.base_commit)
    # Same line as the session's second hunk of a.txt.
    (user_repo / "a.txt").write_bytes(_lines(40).replace(b"line 30\n", b"user 30\n"))
    before = repo_fingerprint(user_repo)
    result = apply_hunks(user_repo, wt.path, diff, diff.hunk_ids())
    assert not result.applied
    assert repo_fingerprint(user_repo) == before
    assert len(result.conflicts) == 1
    conflict = result.conflicts[0]
    hunk30 = diff.files[0].hunks[1]
    assert conflict.path == "a.txt"
    assert conflict.hunk_ids == (hunk30.id,)
    assert conflict.lines == (27, 33)
    assert "a.txt lines 27-33" in result.report()
    assert "nothing was written" in result.report()
    # Without the conflicting hunk everything else applies and merges with the user's edit.
    rest = [h for h in diff.hunk_ids() if h != hunk30.id]
    assert apply_hunks(user_repo, wt.path, diff, rest).applied
    merged = (user_repo / "a.txt").read_bytes()
    assert b"session 3\n" in merged and b"user 30\n" in merged and b"session 30" not in merged
    assert (user_repo / "new.txt").read_bytes() == b"new\n"


def test_added_deleted_renamed_and_mode_changes(user_repo: Path, make_session: MakeSession) -> None:
    wt = make_session(user_repo)
    (wt.path / "moved").mkdir()
    os.rename(wt.path / "a.txt", wt.path / "moved" / "a2.txt")
    (wt.path / "b.txt").unlink()
    (wt.path / "src" / "m.py").chmod(0o755)
    (wt.path / "tool.sh").write_bytes(b"#!/bin/sh\necho hi\n")
    (wt.path / "tool.sh").chmod(0o755)
    diff = compute_diff(wt.path, wt.base_commit)
    statuses = {c.path: c.status for c in diff.files}
    assert statuses == {
        "moved/a2.txt": "renamed",
        "b.txt": "deleted",
        "src/m.py": "mode",
        "tool.sh": "added",
    }
    result = apply_hunks(user_repo, wt.path, diff, diff.hunk_ids())
    assert result.applied, result.report()
    assert not (user_repo / "a.txt").exists() and not (user_repo / "b.txt").exists()
    assert (user_repo / "moved" / "a2.txt").read_bytes() == _lines(40)
    assert os.access(user_repo / "src" / "m.py", os.X_OK)
    assert os.access(user_repo / "tool.sh", os.X_OK)
    assert (user_repo / "tool.sh").read_bytes() == b"#!/bin/sh\necho hi\n"
    # Nothing was staged: apply never touches the index.
    assert git(user_repo, "diff", "--cached", "--name-only") == ""


def test_rename_rejected_but_content_approved_edits_in_place(
    user_repo: Path, make_session: MakeSession
) -> None:
    wt = make_session(user_repo)
    os.rename(wt.path / "a.txt", wt.path / "a2.txt")
    (wt.path / "a2.txt").write_bytes(_lines(40).replace(b"line 10\n", b"ten\n"))
    diff = compute_diff(wt.path, wt.base_commit)
    (change,) = diff.files
    text = [h.id for h in change.hunks if h.kind == "text"]
    assert [h.kind for h in change.hunks] == ["rename", "text"]
    assert apply_hunks(user_repo, wt.path, diff, text).applied
    assert (user_repo / "a.txt").read_bytes() == _lines(40).replace(b"line 10\n", b"ten\n")
    assert not (user_repo / "a2.txt").exists()


def test_user_deleting_or_creating_conflicts(user_repo: Path, make_session: MakeSession) -> None:
    wt = make_session(user_repo)
    (wt.path / "b.txt").write_bytes(b"alpha\nbeta!\ngamma\n")
    (wt.path / "c.txt").write_bytes(b"session\n")
    diff = compute_diff(wt.path, wt.base_commit)
    (user_repo / "b.txt").unlink()
    (user_repo / "c.txt").write_bytes(b"user\n")
    before = repo_fingerprint(user_repo)
    result = apply_hunks(user_repo, wt.path, diff, diff.hunk_ids())
    assert not result.applied
    assert {c.path for c in result.conflicts} == {"b.txt", "c.txt"}
    assert repo_fingerprint(user_repo) == before


def test_never_writes_through_a_symlinked_directory(
    user_repo: Path, make_session: MakeSession, tmp_path: Path
) -> None:
    wt = make_session(user_repo)
    (wt.path / "out").mkdir()
    (wt.path / "out" / "x.txt").write_bytes(b"x\n")
    diff = compute_diff(wt.path, wt.base_commit)
    outside = tmp_path / "outside"
    outside.mkdir()
    (user_repo / "out").symlink_to(outside)
    result = apply_hunks(user_repo, wt.path, diff, diff.hunk_ids())
    assert not result.applied
    assert "symlink" in result.report()
    assert list(outside.iterdir()) == []


def test_unknown_hunk_is_an_error(user_repo: Path, make_session: MakeSession) -> None:
    wt = make_session(user_repo)
    (wt.path / "b.txt").write_bytes(b"x\n")
    diff = compute_diff(wt.path, wt.base_commit)
    with pytest.raises(UnknownHunk):
        apply_hunks(user_repo, wt.path, diff, ["feedfacecafe"])


def test_commit_includes_only_applied_files(user_repo: Path, make_session: MakeSession) -> None:
    wt = make_session(user_repo)
    (wt.path / "b.txt").write_bytes(b"alpha\nBETA\ngamma\n")
    (wt.path / "new.txt").write_bytes(b"new\n")
    diff = compute_diff(wt.path, wt.base_commit)
    # The user has their own staged change in another file; it must stay staged, uncommitted.
    (user_repo / "src" / "m.py").write_bytes(b"def f():\n    return 2\n")
    git(user_repo, "add", "src/m.py")
    head = git(user_repo, "rev-parse", "HEAD").strip()
    result = apply_hunks(user_repo, wt.path, diff, diff.hunk_ids(), commit_message="take it")
    assert result.applied and result.commit
    assert git(user_repo, "rev-parse", "HEAD").strip() == result.commit
    assert git(user_repo, "rev-parse", "HEAD~1").strip() == head
    names = git(user_repo, "show", "--name-only", "--format=%s", "HEAD").split()
    assert names == ["take", "it", "b.txt", "new.txt"]
    assert git(user_repo, "diff", "--cached", "--name-only").split() == ["src/m.py"]
    assert git(user_repo, "status", "--porcelain").splitlines() == ["M  src/m.py"]
