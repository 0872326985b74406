"""Apply writes exactly what was reviewed: a change made to the worktree after the review
(what a process that outlived its Bash call can do) is never written to the user's tree."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path

import pytest

from frogdesk.config import Settings
from frogdesk.core.reviewing import (
    StaleReviewError,
    apply_checked,
    apply_reviewed,
    load_review,
    show_review,
    undo_latest,
)
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.paths import AppPaths
from frogdesk.review.gitcmd import read_blobs
from frogdesk.review.reviewed import STALE_NOTE
from frogdesk.sessions.store import SessionStore
from tests.attacks.harness import bash, frogdesk, run_attack
from tests.support.e2e import changed_paths, repo_state

BASE = b"".join(b"line %d\n" % i for i in range(1, 61))
AGENT = b"agent line\n"
SURVIVOR = b"survivor line\n"


def _repo(root: Path) -> Path:
    """A user repository with one committed file and a change of the user's own elsewhere."""
    from tests.support.e2e import git

    repo = root / "user-repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "big.txt").write_bytes(BASE)
    (repo / "mine.txt").write_bytes(b"user file\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "first")
    (repo / "mine.txt").write_bytes(b"user file, edited\n")  # the user's uncommitted work
    return repo


def _session(root: Path, level: str) -> tuple[Path, str, Path]:
    """A real sandboxed run whose agent appends one line to big.txt: repo, session, worktree."""
    repo = _repo(root)
    run = run_attack(repo, [bash("echo 'agent line' >> big.txt")], root, level)
    assert run.observations[0].startswith("Exit code: 0"), run.observations
    record = SessionStore(AppPaths.default().sessions_dir).get(run.session_id)
    return repo, run.session_id, Path(record.worktree)


def _reviewed_lines(session_id: str) -> list[str]:
    """`frogdesk review --json`: every line the user was shown."""
    done = frogdesk("review", session_id, "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    return [line for f in payload["files"] for h in f["hunks"] for line in h["lines"]]


def _append(path: Path, data: bytes) -> None:
    """What the surviving process does: one more line in a worktree file."""
    with path.open("ab") as fh:
        fh.write(data)


def test_apply_all_refuses_a_file_changed_after_review(level: str, tmp_path: Path) -> None:
    repo, sid, worktree = _session(tmp_path, level)
    assert "+agent line" in _reviewed_lines(sid)
    before = repo_state(repo)
    _append(worktree / "big.txt", SURVIVOR)  # after the review showed the change

    for how in (["--all"], ["--files", "big.txt"]):
        done = frogdesk("apply", sid, *how)
        assert done.returncode == 1, (how, done.stdout, done.stderr)
        assert f"big.txt: {STALE_NOTE}" in done.stderr, done.stderr
        assert "nothing was written" in done.stderr
        assert repo_state(repo) == before  # byte for byte: nothing of either line landed
    # The survivor's line is not approved behind the user's back either.
    assert "approved" not in frogdesk("review", sid, "--json").stdout

    # Positive control: reviewed again, the same bytes (the survivor's line now shown) apply.
    assert "+survivor line" in _reviewed_lines(sid)
    done = frogdesk("apply", sid, "--all")
    assert done.returncode == 0, done.stderr
    assert (repo / "big.txt").read_bytes() == BASE + AGENT + SURVIVOR
    assert changed_paths(before, repo_state(repo)) == {"big.txt"}
    assert (repo / "mine.txt").read_bytes() == b"user file, edited\n"


def test_hunks_apply_only_the_reviewed_hunk(level: str, tmp_path: Path) -> None:
    repo, sid, worktree = _session(tmp_path, level)
    done = frogdesk("review", sid, "--json")
    (shown,) = [h["id"] for f in json.loads(done.stdout)["files"] for h in f["hunks"]]
    before = repo_state(repo)
    # A new hunk far from the reviewed one (the top of the file), and one that alters it.
    text = (worktree / "big.txt").read_bytes()
    (worktree / "big.txt").write_bytes(b"survivor top\n" + text)

    assert frogdesk("apply", sid, "--all").returncode == 1
    assert repo_state(repo) == before
    # The reviewed hunk is still there, unchanged: by its id it applies, and only it does.
    done = frogdesk("apply", sid, "--hunks", shown)
    assert done.returncode == 0, done.stderr
    assert (repo / "big.txt").read_bytes() == BASE + AGENT
    assert changed_paths(before, repo_state(repo)) == {"big.txt"}
    assert frogdesk("undo", sid).returncode == 0
    assert repo_state(repo) == before

    # The reviewed hunk itself changed: its id names nothing the review showed any more.
    _append(worktree / "big.txt", SURVIVOR)
    done = frogdesk("apply", sid, "--hunks", shown)
    assert done.returncode == 1, done.stderr
    assert f"big.txt: {STALE_NOTE}" in done.stderr
    assert repo_state(repo) == before


def test_an_append_before_the_review_is_applied(level: str, tmp_path: Path) -> None:
    """Positive control for the whole rule: what the review showed is applied, survivor or not."""
    repo, sid, worktree = _session(tmp_path, level)
    _append(worktree / "big.txt", SURVIVOR)
    lines = _reviewed_lines(sid)
    assert "+agent line" in lines and "+survivor line" in lines
    before = repo_state(repo)
    done = frogdesk("apply", sid, "--all")
    assert done.returncode == 0, done.stderr
    assert (repo / "big.txt").read_bytes() == BASE + AGENT + SURVIVOR
    assert changed_paths(before, repo_state(repo)) == {"big.txt"}


def test_apply_with_no_review_prints_what_it_applies(tmp_path: Path) -> None:
    """No review first: the apply prints each hunk it writes, and that print is the review."""
    repo, sid, _ = _session(tmp_path, "landlock")
    done = frogdesk("apply", sid, "--all")
    assert done.returncode == 0, done.stderr
    assert "+agent line" in done.stdout and "modified   big.txt" in done.stdout, done.stdout
    assert (repo / "big.txt").read_bytes() == BASE + AGENT


def test_run_apply_and_the_review_screen_apply_the_diff_they_showed(tmp_path: Path) -> None:
    """`run --apply` (apply_all) lists what it applies, from the diff it applied; the TUI's
    review screen (CoreWorkbench.review/apply) applies the diff on the screen, whatever a
    survivor writes after it was shown."""
    repo, sid, worktree = _session(tmp_path, "landlock")
    workbench = CoreWorkbench(repo, Settings())
    store = SessionStore(AppPaths.default().sessions_dir)
    before = repo_state(repo)
    # Positive control, the old road: show, then diff the worktree anew and apply that.
    show_review(store, sid)
    _append(worktree / "big.txt", SURVIVOR)
    fresh = load_review(store, sid)
    assert apply_reviewed(fresh, fresh.diff.hunk_ids()).applied
    assert (repo / "big.txt").read_bytes() == BASE + AGENT + SURVIVOR  # the attack, landed
    assert undo_latest(store, sid) is not None and repo_state(repo) == before
    # `run --apply`: the run is over and its patch file written; a survivor writes now.
    # With no review first, what is applied is the listing the user reads: one diff, both.
    shown: list[str] = []
    report = workbench.apply_all(sid, shown.append)
    assert "applied 1 file at " in report
    assert any("+agent line" in line for line in shown)
    assert any("+survivor line" in line for line in shown)
    assert (repo / "big.txt").read_bytes() == BASE + AGENT + SURVIVOR  # exactly as listed
    assert workbench.undo(sid) is not None and repo_state(repo) == before

    review = workbench.review(sid)  # the review screen shows this diff
    _append(worktree / "big.txt", b"second survivor\n")
    result = workbench.apply(review, review.diff.hunk_ids(), review.decisions)
    assert result.applied, result.report()
    assert (repo / "big.txt").read_bytes() == BASE + AGENT + SURVIVOR  # the screen's diff
    assert changed_paths(before, repo_state(repo)) == {"big.txt"}


@pytest.mark.slow
def test_a_survivor_writing_all_along_never_gets_an_unreviewed_byte_in(tmp_path: Path) -> None:
    """Many rounds of review + `apply --all` while a writer appends to the worktree file in
    bursts: each apply is refused, or writes exactly the bytes its review showed."""
    repo, sid, worktree = _session(tmp_path, "landlock")
    store = SessionStore(AppPaths.default().sessions_dir)
    before = repo_state(repo)
    stop = threading.Event()
    rng = random.Random(28)

    def survivor() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            _append(worktree / "big.txt", b"survivor %d\n" % n)
            # Bursts and lulls: some applies race a write, some find the file as reviewed.
            stop.wait(rng.choice((0.0, 0.0, 0.01, 0.3, 1.0)))

    writer = threading.Thread(target=survivor, daemon=True)
    writer.start()
    refused = applied = 0
    try:
        for _ in range(200):
            review = show_review(store, sid)
            (change,) = review.diff.files
            assert change.new_blob is not None
            shown = read_blobs(worktree, [change.new_blob])[change.new_blob]
            loaded = load_review(store, sid)  # `apply --all`: the diff computed anew
            try:
                result = apply_checked(loaded, loaded.diff.hunk_ids(), "all", lambda _: None)
            except StaleReviewError as exc:
                assert f"big.txt: {STALE_NOTE}" in str(exc)
                assert repo_state(repo) == before
                refused += 1
                continue
            assert result.applied, result.report()
            assert (repo / "big.txt").read_bytes() == shown  # the reviewed bytes
            applied += 1
            assert undo_latest(store, sid) is not None
            assert repo_state(repo) == before
    finally:
        stop.set()
        writer.join()
    assert refused > 0  # the writer did race the applies (else the test proves nothing)
    assert applied > 0  # and the rule still lets an unchanged review through
    print(f"rounds: {refused} refused, {applied} applied exactly as reviewed")
