"""`[loop]`: the Leaf loop's budgets and sampling (read by `frogdesk.leaf`, the sessions and
the attempts)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from frogdesk.config.option import option

DEFAULT_MAX_STEPS = 150
"""The vendor's step budget of one run; the settings, the loop and the status bar start here."""
DEFAULT_MAX_CONTEXT_TOKENS = 131072
"""The vendor's context budget of one run in tokens."""
DEFAULT_MAX_TOKENS_PER_TURN = 8192
"""The vendor's cap on the tokens of one model reply."""


@dataclass
class LoopSettings:
    """What one run may spend, how the model samples, and how many attempts run."""

    SECTION: ClassVar[str] = "loop"

    max_steps: int = option(DEFAULT_MAX_STEPS, minimum=1)
    """Step budget of one run (the vendor's evaluation used 150)."""
    max_context_tokens: int = option(DEFAULT_MAX_CONTEXT_TOKENS, minimum=512)
    """Context budget of one run in tokens (the vendor's evaluation used about 131,072)."""
    max_tokens_per_turn: int = option(DEFAULT_MAX_TOKENS_PER_TURN, minimum=1)
    """Cap on the tokens of one model reply (the vendor's evaluation used 8,192)."""
    max_time: float = option(0.0, minimum=0)
    """Wall-clock budget of one run in seconds; 0 means none."""
    temperature: float = option(0.6, minimum=0)
    """Sampling temperature (the vendor's 0.6)."""
    seed: int = option(-1, minimum=-1)
    """Sampling seed; -1 picks a fresh one each run."""
    attempts: int = option(1)
    """Attempts at each task, side by side in their own worktrees (`run --attempts N`)."""
    stop_after_repeats: int = option(8, minimum=0)
    """End a run once the model has made the same tool calls with the same results this many
    steps in a row (exit reason `stuck`, FrogDesk's own); 0 never does, as the vendor's
    evaluation."""
    check_timeout: float = option(600.0)
    """Seconds the check command may run in each attempt's worktree before it counts as failed."""
    enable_thinking: bool = option(True)
    """Let the model reason in <think> before acting, as it was trained."""
    project_instructions: bool = option(False)
    """Append the repository's AGENTS.md to the system prompt (the model was not trained with it)."""
