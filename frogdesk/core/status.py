"""Session status in words a person understands, from the record's status and exit reason."""

from __future__ import annotations

from frogdesk.sessions.active import shown_status
from frogdesk.sessions.record import SessionRecord

_ENDINGS = {
    "agent": "finished: final answer",
    "max_turns": "stopped: step budget",
    "max_context_len": "stopped: context full",
    "max_tokens_per_turn": "stopped: reply too long",
    "max_time": "stopped: time limit",
    "llm_query_error": "stopped: model error",
    "tool_error": "stopped: tool error",
    "cancelled": "stopped by you",
}

_STATES = {
    "created": "new: not run yet",
    "running": "running",
    "interrupted": "interrupted: can resume",
    "discarded": "discarded",
}


def ending_words(exit_reason: str) -> str:
    """How a run ended, e.g. "stopped: step budget"; an unknown reason is shown as it is."""
    return _ENDINGS.get(exit_reason, f"ended: {exit_reason}" if exit_reason else "ended")


def status_words(record: SessionRecord) -> str:
    """The session's state for a list: "finished: final answer", "interrupted: can resume", ..."""
    status = shown_status(record)
    if status == "finished" or (status == "interrupted" and record.exit_reason == "cancelled"):
        return ending_words(record.exit_reason)
    return _STATES.get(status, status)
