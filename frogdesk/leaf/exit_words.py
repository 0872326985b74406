"""How a run ended, in words a person reads: the one table every face shows (the JSON and the
records keep the identifiers of `ExitReason`)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

EXIT_WORDS: Mapping[str, str] = MappingProxyType(
    {
        "agent": "finished: final answer",
        "max_turns": "stopped: step budget used up",
        "max_context_len": "stopped: context full",
        "max_tokens_per_turn": "stopped: reply too long",
        "max_time": "stopped: time limit reached",
        "llm_query_error": "stopped: model error",
        "tool_error": "stopped: tool error",
        "stuck": "stopped: the model repeated the same call",
        "cancelled": "stopped by you",
        "crashed": "stopped: the attempt broke",  # an attempt's own reason, not Leaf's
    }
)
"""Each `ExitReason` (and an attempt's `crashed`) in words."""


def exit_words(exit_reason: str) -> str:
    """How a run ended, e.g. "stopped: context full"; an unknown reason says "ended" with it
    ("ended" alone when there is none)."""
    known = EXIT_WORDS.get(exit_reason)
    if known is not None:
        return known
    return f"ended ({exit_reason.replace('_', ' ')})" if exit_reason else "ended"
