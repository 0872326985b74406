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
]


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
class ToolFinished:
    """A tool call ran; `observation` is exactly what the model sees."""

    step: int
    index: int
    call: ToolCall
    observation: str
    elapsed: float
    ok: bool


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
