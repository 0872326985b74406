"""Where a download stands: the value a progress line or bar is drawn from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Progress:
    """Where a download stands, for a progress line or bar."""

    file: str
    done: int
    total: int
    rate: float
    """Bytes per second over this run (resumed bytes excluded)."""
    eta: float | None
    """Seconds left at that rate; None before the rate is known."""
    resumed_from: int = 0


ProgressCallback = Callable[[Progress], None]
