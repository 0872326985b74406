"""Events the agent loop streams to its driver (the TUI or the headless CLI)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from frogdesk.engine.chat import ContentDelta, Decoded, ReasoningDelta, ToolCall, Usage

ExitReason = Literal[
    "agent",
    "max_turns",
    "max_context_len",
    "max_tokens_per_turn",
    "cancelled",
    "max_time",
    "llm_query_error",
    "tool_error",
    "stuck",
]
"""Leaf's exit reasons, and FrogDesk's own `stuck`: the model made the same tool calls with
the same results `stop_after_repeats` steps in a row (off in the vendor's evaluation)."""


@dataclass(frozen=True)
class StepStarted:
    """A new step (one model reply and its tool calls) begins."""

    step: int


@dataclass(frozen=True)
class ToolStarted:
    """A tool call is about to run."""

    step: int
    index: int
    call: ToolCall


@dataclass(frozen=True)
class CommandOutcome:
    """How a Bash command ended, as the shell reported it (not read back from the text)."""

    exit_code: int
    stopped: bool = False
    """The user stopped it (Esc, Ctrl-C)."""
    timed_out: bool = False

    @property
    def succeeded(self) -> bool:
        """Whether it ran to the end and exited 0."""
        return self.exit_code == 0 and not self.stopped and not self.timed_out

    def describe(self) -> str:
        """A few words for people: `exit 0`, `exit 1`, `stopped`, `timed out`."""
        if self.timed_out:
            return "timed out"
        if self.stopped:
            return "stopped"
        return f"exit {self.exit_code}"


@dataclass(frozen=True)
class ToolFinished:
    """A tool call ran; `observation` is exactly what the model sees."""

    step: int
    index: int
    call: ToolCall
    observation: str
    elapsed: float
    ok: bool
    """The tool ran (a Bash command that exits 1 ran: its outcome says how it ended)."""
    command: CommandOutcome | None = None
    """How a Bash command ended; None for the other tools (and calls that never ran)."""


@dataclass(frozen=True)
class StepUsage:
    """Token usage of a step's reply."""

    step: int
    usage: Usage


@dataclass(frozen=True)
class Notice:
    """A message for the user only (never the model): looping, sandbox warnings, ..."""

    text: str
    level: Literal["info", "warning", "error"] = "info"


@dataclass(frozen=True)
class RunFinished:
    """The run ended."""

    exit_reason: ExitReason
    final_message: str
    error: str = ""
    n_steps: int = 0


LoopEvent = (
    StepStarted
    | ReasoningDelta
    | ContentDelta
    | Decoded
    | ToolStarted
    | ToolFinished
    | StepUsage
    | Notice
    | RunFinished
)
