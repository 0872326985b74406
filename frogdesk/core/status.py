"""Session status in words a person understands, from the record's status and exit reason."""

from __future__ import annotations

from frogdesk.leaf.exit_words import exit_words
from frogdesk.sessions.active import shown_status
from frogdesk.sessions.record import SessionRecord

_STATES = {
    "created": "new: not run yet",
    "running": "running",
    "interrupted": "interrupted: can resume",
    "discarded": "discarded",
}


def ending_words(exit_reason: str) -> str:
    """How a run ended, e.g. "stopped: context full" (the one table: leaf.exit_words)."""
    return exit_words(exit_reason)


def check_source_words(source: str) -> str:
    """Where an attempts check came from, in words: "you gave it", "detected: pytest.ini"."""
    if source == "given":
        return "given by you"
    if source.startswith("detected"):
        return source
    return source or "no check"


def stored_status(record: SessionRecord) -> str:
    """The record's status as it stands: a `running` session whose process is gone is
    `interrupted` (what `sessions --json` prints)."""
    return shown_status(record)


def status_words(record: SessionRecord) -> str:
    """The session's state for a list: "finished: final answer", "interrupted: can resume", ..."""
    status = shown_status(record)
    if status == "finished" or (status == "interrupted" and record.exit_reason == "cancelled"):
        return ending_words(record.exit_reason)
    return _STATES.get(status, status)


def sent_back_words(comment: str) -> str:
    """The user's turn a face shows for a send-back: their comment, or that there was none."""
    text = comment.strip()
    return f"Sent back from the review: {text}" if text else "Sent back from the review."
