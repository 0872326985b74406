"""What moving a session to another model costs and warns of, announced before it happens."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from frogdesk.models.gguf_info import GgufInfo
from frogdesk.models.warning import ModelWarning


@dataclass(frozen=True)
class SwitchCost:
    """What switching costs, announced before it happens."""

    tokens: int
    """Tokens of the conversation the new model must evaluate from scratch."""
    est_seconds: float
    tokens_per_second: float
    measured: bool
    """The rate comes from a measured prefill rather than a guess from the model's size."""

    def describe(self) -> str:
        """One line for the user."""
        how = "measured" if self.measured else "estimated"
        return (
            f"switching re-reads {self.tokens:,} tokens: about {self.est_seconds:.0f} s "
            f"at {self.tokens_per_second:,.0f} tokens/s ({how})"
        )


@dataclass(frozen=True)
class SwitchPlan:
    """Everything to announce before a session moves to another model: file, cost, warnings."""

    spec: str
    path: Path
    info: GgufInfo
    cost: SwitchCost
    warnings: tuple[ModelWarning, ...]

    def announcement(self) -> str:
        """The cost line, and the warnings of the new model, for the user."""
        lines = [f"{self.path.name}: {self.cost.describe()}"]
        lines += [w.text for w in self.warnings]
        return "\n".join(lines)
