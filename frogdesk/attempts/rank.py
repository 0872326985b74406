"""Ranking attempts: a passed check first, then a final answer, then the smaller change."""

from __future__ import annotations

from collections.abc import Sequence

from frogdesk.attempts.record import AttemptResult

RANKING = (
    "check passed first; then attempts that ended with a final answer; then the fewest "
    "lines changed (a focused fix is easier to review); then the fewest steps; then start order"
)
"""The ranking in words, shown to the user beside the ranked list."""


def rank_key(attempt: AttemptResult) -> tuple[int, int, int, int, int]:
    """Sort key: smaller is better (see RANKING)."""
    passed = attempt.check is not None and attempt.check.passed
    return (
        0 if passed else 1,
        0 if attempt.exit_reason == "agent" else 1,
        attempt.lines_changed if attempt.files_changed else 1 << 30,
        attempt.n_steps,
        attempt.index,
    )


def rank(attempts: Sequence[AttemptResult]) -> list[AttemptResult]:
    """The attempts best first, by RANKING."""
    return sorted(attempts, key=rank_key)


def pick(ranked: Sequence[AttemptResult]) -> AttemptResult | None:
    """The attempt to choose on its own: the best one, only when its check passed."""
    if ranked and ranked[0].check is not None and ranked[0].check.passed:
        return ranked[0]
    return None
