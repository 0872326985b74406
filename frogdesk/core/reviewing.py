"""Reviewing a session: its diff with the decisions so far, applying chosen hunks, undoing an apply."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from frogdesk.review.apply import ApplyResult, apply_hunks
from frogdesk.review.decisions import HunkDecisions, load_decisions
from frogdesk.review.diff import compute_diff
from frogdesk.review.model import SessionDiff
from frogdesk.review.undo import UndoResult, latest_record, undo_apply
from frogdesk.review.user_changes import load_user_changes
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.runner import ApplyRefusedError
from frogdesk.sessions.store import SessionStore


class WorktreeGoneError(ValueError):
    """The session's worktree no longer exists (discarded or removed): nothing to review."""


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


def apply_reviewed(
    review: SessionReview,
    hunk_ids: Collection[str],
    *,
    decisions: HunkDecisions | None = None,
    commit_message: str | None = None,
) -> ApplyResult:
    """Write the chosen hunks (with the user's edits of them) to the repository, undoably.

    `decisions` replaces the saved ones (a review screen's, not yet saved); all or nothing:
    on a conflict nothing is written and the result names it.
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


def apply_all(store: SessionStore, session_id: str) -> str:
    """Apply every hunk of a session to the user's repository (undoably); the apply report."""
    review = load_review(store, session_id)
    result = apply_reviewed(review, review.diff.hunk_ids())
    if not result.applied:
        raise ApplyRefusedError(result.report())
    return result.report()
