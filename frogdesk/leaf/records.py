"""What a run leaves behind: step records, the loop's result, and their JSON form."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from frogdesk.engine.chat import Message, Reply, ToolCall, Usage
from frogdesk.leaf.events import CommandOutcome, ExitReason
from frogdesk.typedjson import build


@dataclass(frozen=True)
class Observation:
    """One tool result as Leaf records it."""

    tool: str
    observation: str
    ok: bool = True
    elapsed: float = 0.0
    call_id: str = ""
    """The id of the call it answers; empty for a malformed call the parser rejected."""
    command: CommandOutcome | None = None
    """How a Bash command ended, so a reopened session shows it as the live run did."""


@dataclass(frozen=True)
class StepRecord:
    """One step: the assistant message, the observations in call order, usage and timings,
    and the reply exactly as the model generated it."""

    step: int
    assistant: Message
    observations: tuple[Observation, ...] = ()
    usage: Usage | None = None
    generation_seconds: float = 0.0
    tool_seconds: float = 0.0
    finish: str = ""
    """The engine's finish reason for the reply (`stop`, `tool_calls`, `length`, ...)."""
    recoveries: tuple[str, ...] = ()
    """Drifts from the tool-call format the parser recovered in this step's reply, by kind."""
    raw_text: str = field(default="", compare=False)
    """The reply exactly as generated (`Finished.raw_text`): the transcript keeps it beside
    the parsed step, so a bug report or a resume has the model's own words. Not part of
    `step_to_dict` (the store writes it beside the step) nor of comparing steps."""
    raw_tokens: tuple[int, ...] = field(default=(), compare=False)
    """The sampled token ids of `raw_text`, where the backend reports them (llama)."""

    def tool_messages(self) -> list[Message]:
        """The tool messages that follow the assistant message, one per call, in order."""
        return [
            Message("tool", obs.observation, tool_call_id=obs.call_id, name=obs.tool)
            for obs in self.observations
        ]


def step_of_reply(
    index: int,
    assistant: Message,
    observations: tuple[Observation, ...],
    reply: Reply,
    generation_seconds: float,
    tool_seconds: float,
    finish: str,
) -> StepRecord:
    """The record of one step, with its reply's usage, recoveries and raw text and tokens."""
    raw = reply.finish
    return StepRecord(
        index,
        assistant,
        observations,
        reply.usage,
        generation_seconds,
        tool_seconds,
        finish,
        tuple(reply.recoveries),
        raw_text=raw.raw_text if raw is not None else "",
        raw_tokens=raw.raw_tokens if raw is not None else (),
    )


@dataclass
class LoopResult:
    """How a run ended and everything it produced."""

    exit_reason: ExitReason
    final_message: str
    messages: list[Message]
    steps: list[StepRecord] = field(default_factory=list)
    error: str = ""
    context_tokens: int = 0
    elapsed: float = 0.0
    cut_usage: Usage | None = None
    """What the reply a stop cut off (Esc, Ctrl+C, the time limit) spent: no step holds it,
    since an unfinished reply is not kept, but its tokens were decoded all the same."""

    @property
    def spent(self) -> list[Usage]:
        """The usage of every reply of the run, the cut one last."""
        usages = [s.usage for s in self.steps if s.usage is not None]
        return usages + ([self.cut_usage] if self.cut_usage is not None else [])

    @property
    def n_steps(self) -> int:
        """Steps taken, counting steps from before a resume."""
        return self.steps[-1].step + 1 if self.steps else 0


def call_to_dict(call: ToolCall) -> dict[str, Any]:
    """A tool call as JSON-ready data."""
    return {"id": call.id, "name": call.name, "arguments": call.arguments}


def message_to_dict(message: Message) -> dict[str, Any]:
    """A message as JSON-ready data (arguments kept as objects)."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.reasoning:
        out["reasoning"] = message.reasoning
    if message.tool_calls:
        out["tool_calls"] = [call_to_dict(c) for c in message.tool_calls]
    if message.tool_call_id:
        out["tool_call_id"] = message.tool_call_id
    if message.name:
        out["name"] = message.name
    return out


def message_from_dict(data: dict[str, Any]) -> Message:
    """Inverse of message_to_dict; a value of the wrong type raises RecordTypeError (a
    ValueError) naming it."""
    return build(Message, data)


def step_to_dict(step: StepRecord) -> dict[str, Any]:
    """A step as JSON-ready data."""
    return {
        "step": step.step,
        "assistant": message_to_dict(step.assistant),
        "observations": [asdict(o) for o in step.observations],
        "usage": asdict(step.usage) if step.usage else None,
        "generation_seconds": step.generation_seconds,
        "tool_seconds": step.tool_seconds,
        "finish": step.finish,
        "recoveries": list(step.recoveries),
    }


def step_from_dict(data: dict[str, Any]) -> StepRecord:
    """Inverse of step_to_dict; a value of the wrong type raises RecordTypeError (a
    ValueError) naming it."""
    return build(StepRecord, data)


def recovery_counts(steps: Sequence[StepRecord]) -> dict[str, int]:
    """How many tool-call drifts of each kind were recovered over `steps` (kinds sorted)."""
    counts = Counter(kind for step in steps for kind in step.recoveries)
    return dict(sorted(counts.items()))


def add_drafts(totals: dict[str, dict[str, int]], usage: Usage | None) -> None:
    """Add one reply's drafted and accepted tokens to `totals` (drafter -> counts)."""
    if usage is None:
        return
    for name, drafted in usage.drafted_by.items():
        counts = totals.setdefault(name, {"drafted": 0, "accepted": 0})
        counts["drafted"] += drafted
        counts["accepted"] += usage.accepted_by.get(name, 0)


def dumps(data: Any) -> str:
    """One compact JSON line."""
    # ASCII: text that is not UTF-8 (a file name's bytes, as a lone surrogate) round-trips
    return json.dumps(data, separators=(",", ":"))
