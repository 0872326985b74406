"""`[tui]`: the app's look, keys and the notices already seen (read by `frogdesk.tui`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from frogdesk.config.option import option


@dataclass
class TuiSettings:
    """The terminal app's own options."""

    SECTION: ClassVar[str] = "tui"

    theme: str = option("frogdesk-dark")
    """TUI theme: frogdesk-dark or frogdesk-light."""
    keys: dict[str, str] = option(factory=dict)
    """TUI key remaps: binding id -> key, e.g. {"review" = "ctrl+r"}."""
    acknowledged: list[str] = option(factory=list)
    """Notices the user has seen once (e.g. a model's license ambiguity)."""
