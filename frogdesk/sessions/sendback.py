"""Sending a reviewed session back to work: revert what was declined, tell the model, go on."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from frogdesk.engine.chat import Message
from frogdesk.review.decisions_store import load_decisions, save_decisions
from frogdesk.review.diff import compute_diff
from frogdesk.review.feedback import feedback_message, reset_to_reviewed
from frogdesk.sessions.store import SessionStore
from frogdesk.worktree.checkout import load_worktree


@dataclass(frozen=True)
class SentBack:
    """What a send-back did: the message the model will read and the worktree paths reverted."""

    session_id: str
    message: str
    reverted: list[str]


def send_back(store: SessionStore, session_id: str, comment: str = "") -> SentBack:
    """Reset the worktree to the review's state and queue the feedback for the model.

    Declined hunks are reverted, edited hunks take the user's text, pending ones stay. The
    feedback (`review.feedback.feedback_message`, with `comment` when given) is appended
    to the transcript as the user message of the next step. Consumed review state (the
    declined decisions, edits and the comment) is cleared so a re-proposed change is
    reviewed afresh.
    """
    record = store.get(session_id)
    worktree_path = Path(record.worktree)
    worktree = load_worktree(worktree_path.parent, worktree_path.name)
    folder = store.session_dir(record.id)
    decisions = load_decisions(folder)
    if comment.strip():
        decisions.comment = comment
    diff = compute_diff(worktree.path, record.base_commit)
    message = feedback_message(diff, decisions)
    reverted = reset_to_reviewed(worktree.path, diff, decisions)
    store.repair_transcript(record.id)
    transcript = store.read_transcript(record.id)
    store.append_followup(record.id, Message("user", message), transcript.next_step)
    decisions.hunks = {k: v for k, v in decisions.hunks.items() if v != "rejected"}
    decisions.edits = {}
    decisions.comment = ""
    save_decisions(folder, decisions)
    return SentBack(record.id, message, reverted)
