"""Leaf's trajectory object (`leaf-function-calling`), with FrogDesk's extras under `frogdesk`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from frogdesk.engine.chat import Message, ToolSchema
from frogdesk.leaf.records import LoopResult, StepRecord, recovery_counts

TRAJECTORY_FORMAT = "leaf-function-calling"
TRAJECTORY_FILE = "trajectory_seed-{seed}.json"
PATCH_FILE = "generated_seed-{seed}.patch"


@dataclass(frozen=True)
class TrajectoryExtras:
    """What FrogDesk adds beside Leaf's fields: who ran it, on what, and how fast."""

    session_id: str
    model_file: str
    quant: str = ""
    backend: str = ""
    sandbox_level: str = ""
    base_commit: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def openai_message(message: Message) -> dict[str, Any]:
    """A message in OpenAI function-calling form (arguments as a JSON string)."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.reasoning:
        out["reasoning_content"] = message.reasoning
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": json.dumps(call.arguments, ensure_ascii=False),
                },
            }
            for call in message.tool_calls
        ]
    if message.role == "tool":
        out["tool_call_id"] = message.tool_call_id
        out["name"] = message.name
    return out


def _step(step: StepRecord) -> dict[str, Any]:
    return {
        "step": step.step,
        "assistant": openai_message(step.assistant),
        "observations": [{"tool": o.tool, "observation": o.observation} for o in step.observations],
    }


def _step_extras(step: StepRecord) -> dict[str, Any]:
    return {
        "step": step.step,
        "usage": asdict(step.usage) if step.usage else None,
        "generation_seconds": round(step.generation_seconds, 4),
        "tool_seconds": round(step.tool_seconds, 4),
        "tool_seconds_each": [round(o.elapsed, 4) for o in step.observations],
        "finish": step.finish,
        "recoveries": list(step.recoveries),
    }


def build_trajectory(
    result: LoopResult,
    *,
    trajectory_id: str,
    instance_id: str,
    seed: int,
    tools: Sequence[ToolSchema],
    output_patch: str,
    extras: TrajectoryExtras,
    elapsed: float | None = None,
) -> dict[str, Any]:
    """The trajectory object Leaf's evaluation writes, plus a `frogdesk` key."""
    ours: dict[str, Any] = {
        "session_id": extras.session_id,
        "model_file": extras.model_file,
        "quant": extras.quant,
        "backend": extras.backend,
        "sandbox_level": extras.sandbox_level,
        "base_commit": extras.base_commit,
        "steps": [_step_extras(s) for s in result.steps],
        "recoveries": recovery_counts(result.steps),
        **extras.extra,
    }
    return {
        "trajectory_format": TRAJECTORY_FORMAT,
        "trajectory_id": trajectory_id,
        "instance_id": instance_id,
        "seed": seed,
        "messages": [openai_message(m) for m in result.messages],
        "tools": list(tools),
        "steps": [_step(s) for s in result.steps],
        "n_steps": result.n_steps,
        "exit_reason": result.exit_reason,
        "error": result.error or None,
        "final_message": result.final_message,
        "context_tokens": result.context_tokens,
        "elapsed_sec": round(result.elapsed if elapsed is None else elapsed, 4),
        "output_patch": output_patch,
        "partial": result.exit_reason != "agent",
        "frogdesk": ours,
    }


def write_results(output_dir: Path, trajectory: dict[str, Any], seed: int = 0) -> tuple[Path, Path]:
    """Write `trajectory_seed-N.json` and `generated_seed-N.patch` into `output_dir`."""
    output_dir.mkdir(parents=True, exist_ok=True)
    traj_path = output_dir / TRAJECTORY_FILE.format(seed=seed)
    patch_path = output_dir / PATCH_FILE.format(seed=seed)
    traj_path.write_text(
        json.dumps(trajectory, indent=2) + "\n",
        encoding="utf-8",  # ASCII: any name round-trips
    )
    patch_path.write_text(str(trajectory.get("output_patch", "")), encoding="utf-8")
    return traj_path, patch_path
