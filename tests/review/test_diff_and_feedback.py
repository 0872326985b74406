"""The diff model (stable ids, statuses, nothing written to the user's repo) and model feedback."""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk.review.decisions import HunkDecisions
from frogdesk.review.decisions_store import load_decisions, save_decisions
from frogdesk.review.diff import compute_diff
from frogdesk.review.feedback import feedback_message, reset_to_reviewed
from tests.support.review_helpers import MakeSession, git, repo_fingerprint


def _lines(n: int) -> bytes:
    return b"".join(b"line %d\n" % i for i in range(1, n + 1))


def test_hunk_ids_survive_unrelated_edits_and_repo_is_untouched(
    user_repo: Path, make_session: MakeSession
) -> None:
    wt = make_session(user_repo)
    before = repo_fingerprint(user_repo)
    (wt.path / "a.txt").write_bytes(_lines(40).replace(b"line 30\n", b"thirty\n"))
    (wt.path / "untracked.txt").write_bytes(b"u\n")
    first = compute_diff(wt.path, wt.base_commit)
    ids = {c.path: [h.id for h in c.hunks] for c in first.files}
    assert set(ids) == {"a.txt", "untracked.txt"}
    # A new hunk far above shifts line numbers; the old hunk keeps its id.
    (wt.path / "a.txt").write_bytes(
        _lines(40).replace(b"line 30\n", b"thirty\n").replace(b"line 2\n", b"two\n")
    )
    second = compute_diff(wt.path, wt.base_commit)
    a_ids = [h.id for h in second.files[0].hunks]
    assert len(a_ids) == 2 and a_ids[1] == ids["a.txt"][0] and a_ids[0] != a_ids[1]
    assert second.files[0].hunks[1].old_start == first.files[0].hunks[0].old_start
    assert repo_fingerprint(user_repo) == before
    assert git(wt.path, "status", "--porcelain").split() == ["M", "a.txt", "??", "untracked.txt"]


def test_compute_diff_of_a_bad_base_fails_clearly(
    user_repo: Path, make_session: MakeSession
) -> None:
    from frogdesk.review.gitcmd import GitError

    wt = make_session(user_repo)
    with pytest.raises(GitError):
        compute_diff(wt.path, "0" * 40)


def test_decisions_persist_and_edits_apply(
    user_repo: Path, make_session: MakeSession, tmp_path: Path
) -> None:
    wt = make_session(user_repo)
    (wt.path / "b.txt").write_bytes(b"alpha\nBETA\ngamma\n")
    (wt.path / "c.txt").write_bytes(b"c\n")
    diff = compute_diff(wt.path, wt.base_commit)
    b_hunk = diff.files[0].hunks[0]
    decisions = HunkDecisions(comment="keep beta lowercase")
    decisions.decide_file(diff, "c.txt", "rejected")
    decisions.edit(diff, b_hunk.id, "alpha\nBeta (edited)\ngamma")
    save_decisions(tmp_path, decisions)
    loaded = load_decisions(tmp_path)
    assert loaded == decisions
    assert loaded.ids(diff, "approved") == {b_hunk.id}
    assert loaded.edited_lines(diff)[b_hunk.id] == (b"alpha\n", b"Beta (edited)\n", b"gamma\n")
    with pytest.raises(KeyError):
        loaded.decide_file(diff, "nope.txt", "approved")

    changed = reset_to_reviewed(wt.path, diff, loaded)
    assert changed == ["b.txt", "c.txt"]
    assert not (wt.path / "c.txt").exists()
    assert (wt.path / "b.txt").read_bytes() == b"alpha\nBeta (edited)\ngamma\n"
    message = feedback_message(diff, loaded)
    assert f"- c.txt: {diff.files[1].hunks[0].header}" in message
    assert "declined" in message and "My comment: keep beta lowercase" in message
    assert "- b.txt: @@ -1,3 +1,3 @@" in message  # listed as edited by the user
    after = compute_diff(wt.path, wt.base_commit)
    assert [c.path for c in after.files] == ["b.txt"]


def test_reset_reverts_rejected_rename_and_keeps_pending(
    user_repo: Path, make_session: MakeSession
) -> None:
    wt = make_session(user_repo)
    (wt.path / "a.txt").rename(wt.path / "a2.txt")
    (wt.path / "b.txt").write_bytes(b"alpha\nbeta\ngamma\ndelta\n")
    diff = compute_diff(wt.path, wt.base_commit)
    decisions = HunkDecisions()
    decisions.decide_file(diff, "a2.txt", "rejected")
    reset_to_reviewed(wt.path, diff, decisions)
    assert (wt.path / "a.txt").read_bytes() == _lines(40) and not (wt.path / "a2.txt").exists()
    assert (wt.path / "b.txt").read_bytes().endswith(b"delta\n")
    assert "I reviewed your changes and declined none" in feedback_message(diff, HunkDecisions())
