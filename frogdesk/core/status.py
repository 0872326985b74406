"""Session status in words a person understands, from the record's status and exit reason."""

from __future__ import annotations

from collections.abc import Sequence

from frogdesk.engine.toolcall.crossdialect import OTHER_DIALECT
from frogdesk.engine.toolcall.dialect import DIALECTS
from frogdesk.leaf.exit_words import exit_words
from frogdesk.leaf.records import StepRecord, recovery_counts
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


def other_dialect_lines(dialect: str, steps: Sequence[StepRecord]) -> list[str]:
    """A line per dialect the model's replies were read in that is not its own."""
    counts = recovery_counts(steps)
    own = DIALECTS.get(dialect)
    own_title = own.title if own is not None else (dialect or "unknown")
    lines = []
    for kind, n in counts.items():
        if not kind.startswith(OTHER_DIALECT):
            continue
        seen = DIALECTS.get(kind[len(OTHER_DIALECT) :])
        form = seen.title if seen is not None else kind[len(OTHER_DIALECT) :]
        times = "once" if n == 1 else f"{n} times"
        lines.append(
            f"the model's reply looked like a tool call in {form} but not in this model's "
            f"dialect ({own_title}); read as a call {times}"
        )
    return lines
