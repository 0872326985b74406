"""Reviewing a session: its diff with the decisions so far, applying chosen hunks, undoing an apply."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from frogdesk.core.errors import StaleReviewError, WorktreeGoneError
from frogdesk.inert import inert_line
from frogdesk.paths import AppPaths
from frogdesk.review.apply import ApplyResult, apply_hunks
from frogdesk.review.decisions import HunkDecisions
from frogdesk.review.decisions_store import load_decisions, save_decisions
from frogdesk.review.diff import compute_diff
from frogdesk.review.facts import file_facts
from frogdesk.review.model import SessionDiff
from frogdesk.review.reviewed import STALE_NOTE, load_reviewed, save_reviewed
from frogdesk.review.show import FileFacts, applied_lines
from frogdesk.review.transaction import recover_all
from frogdesk.review.undo import UndoResult, latest_record, undo_apply
from frogdesk.review.user_changes import load_user_changes
from frogdesk.sessions.errors import ApplyRefusedError
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.store import SessionStore

Scope = Literal["all", "files", "hunks"]
"""How an apply chose its hunks: every hunk, every hunk of some files, or hunks by id."""


@dataclass(frozen=True)
class SessionReview:
    """A session's changes as the user reviews them."""

    record: SessionRecord
    session_dir: Path
    diff: SessionDiff
    decisions: HunkDecisions
    """The approvals, rejections and edits saved so far."""
    user_changed: set[str]
    """Repository paths the user changed while the session ran."""

    def file_facts(self) -> dict[str, FileFacts]:
        """Each changed file's symlink targets and blob sizes, read from the worktree (blocking)."""
        return file_facts(Path(self.record.worktree), self.diff)

    def approve(self, hunk_ids: Collection[str]) -> None:
        """Mark the hunks approved and save the decisions (atomically) in the session folder."""
        self.decisions.decide(hunk_ids, "approved")
        save_decisions(self.session_dir, self.decisions)


def recover_interrupted(paths: AppPaths) -> list[str]:
    """Finish or revert every apply or undo a crash cut short (each command's first step);
    one line for each, saying what was done."""
    return [inert_line(done.describe()) for done in recover_all(paths.sessions_dir)]


def session_store(paths: AppPaths) -> SessionStore:
    """The sessions stored under `paths`, for the functions here that take a store."""
    return SessionStore(paths.sessions_dir)


def load_review(store: SessionStore, session_id: str) -> SessionReview:
    """The diff of a session's worktree against its base, with its saved decisions (blocking)."""
    record = store.get(session_id)
    worktree = Path(record.worktree)
    if record.status == "discarded" or not worktree.is_dir():
        raise WorktreeGoneError(f"the worktree of session {record.id} is gone: {worktree}")
    session_dir = store.session_dir(record.id)
    diff = compute_diff(worktree, record.base_commit)
    return SessionReview(
        record, session_dir, diff, load_decisions(session_dir), load_user_changes(session_dir)
    )


def show_review(store: SessionStore, session_id: str) -> SessionReview:
    """`load_review`, recorded as shown: for a face that shows the user this diff (blocking).

    The record (each file's and hunk's content digest) is what a later apply checks, so a
    process that changes the worktree after the user looked cannot get its change applied.
    """
    review = load_review(store, session_id)
    save_reviewed(review.session_dir, review.diff)
    return review


def stale_since_review(
    review: SessionReview, hunk_ids: Collection[str], scope: Scope
) -> list[str] | None:
    """One line per file whose change differs from what the latest review showed.

    None when the session was never reviewed. `all` checks every file (a file new or gone
    since the review counts); `files` the files of the chosen hunks, whole; `hunks` the
    chosen hunks alone (a hunk the review did not show counts).
    """
    record = load_reviewed(review.session_dir)
    if record is None:
        return None
    diff, chosen = review.diff, set(hunk_ids)
    if scope == "all":
        stale = record.stale_files(diff)
    elif scope == "files":
        paths = {c.path for c in diff.files if any(h.id in chosen for h in c.hunks)}
        stale = record.stale_files(diff, paths)
    else:
        stale = record.stale_hunks(diff, chosen)
    return [inert_line(f"{path}: {STALE_NOTE}") for path in stale]


def stale_review_error(review: SessionReview, stale: list[str]) -> StaleReviewError:
    """The refusal for the files `stale_since_review` named, one line each."""
    head = f"apply refused; nothing was written (see `frogdesk review {review.record.id}`):"
    return StaleReviewError("\n".join([head, *(f"  {line}" for line in stale)]))


def apply_checked(
    review: SessionReview,
    hunk_ids: Collection[str],
    scope: Scope,
    show: Callable[[str], None],
    *,
    commit_message: str | None = None,
) -> ApplyResult:
    """Apply the chosen hunks, exactly as the user reviewed them (the CLI's `apply`).

    After a review: StaleReviewError naming each file that changed since, and nothing is
    written (for every scope: the user chose from a view that no longer holds, so the whole
    apply waits for a new review). With no review: once applied, the hunks written are
    listed through `show`, from the same diff, and that listing is the review (as with
    `run --apply`); a refused apply lists nothing, since it wrote nothing.
    """
    stale = stale_since_review(review, hunk_ids, scope)
    if stale:
        raise stale_review_error(review, stale)
    result = apply_reviewed(review, hunk_ids, commit_message=commit_message)
    if stale is None and result.applied:
        _list_applied(review, hunk_ids, show)
    return result


def _list_applied(
    review: SessionReview, hunk_ids: Collection[str], show: Callable[[str], None]
) -> None:
    """Show the hunks an apply with no review wrote: what it prints is what it wrote."""
    show(f"applied, with no review before (`frogdesk undo {review.record.id}` reverts it):")
    for line in applied_lines(review.diff, set(hunk_ids), review.file_facts()):
        show(line)


def apply_reviewed(
    review: SessionReview,
    hunk_ids: Collection[str],
    *,
    decisions: HunkDecisions | None = None,
    commit_message: str | None = None,
) -> ApplyResult:
    """Write the chosen hunks (with the user's edits of them) to the repository, undoably.

    `decisions` replaces the saved ones (a review screen's, not yet saved); all or nothing:
    on a conflict nothing is written and the result names it. What is written is
    `review.diff` as the face showed it (hunk lines in memory, blobs by id), never the
    worktree as it is now: the TUI's review screen applies the diff on the screen.
    """
    chosen = decisions if decisions is not None else review.decisions
    record = review.record
    return apply_hunks(
        Path(record.repo),
        Path(record.worktree),
        review.diff,
        list(hunk_ids),
        edits=chosen.edited_lines(review.diff),
        session_dir=review.session_dir,
        session_id=record.id,
        commit_message=commit_message,
        user_changed=review.user_changed,
    )


def undo_latest(store: SessionStore, session_id: str | None) -> UndoResult | None:
    """Undo the newest apply of a session (or of any session); None when there is none."""
    found = latest_record(store.root, session_id)
    if found is None:
        return None
    return undo_apply(*found)


def apply_all(store: SessionStore, session_id: str, show: Callable[[str], None]) -> str:
    """Apply every hunk of a session (undoably) and list them through `show`; the report.

    For `run --apply`, where no review comes first: the listing is the review. The diff is
    computed once, and that same diff is applied and listed, so what the user reads is
    exactly what was written (a change made to the worktree after it is not applied).
    """
    review = load_review(store, session_id)
    ids = review.diff.hunk_ids()
    result = apply_reviewed(review, ids)
    if not result.applied:
        raise ApplyRefusedError(result.report())
    _list_applied(review, ids, show)
    return result.report()
