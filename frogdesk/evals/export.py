"""A run in SWE-bench's predictions shape: JSONL of instance_id, model_name_or_path, model_patch."""

from __future__ import annotations

import json

from frogdesk.evals.results import RAN, RunResult


def predictions(run: RunResult, attempt: int = 1) -> list[dict[str, str]]:
    """One prediction per task that ran: attempt `attempt` (1-based)'s patch, as the model left
    it; the choice is by position, never by our check, so scoring elsewhere stays blind."""
    out: list[dict[str, str]] = []
    for task in run.tasks:
        if task.status != RAN or len(task.attempts) < attempt:
            continue
        out.append(
            {
                "instance_id": task.task,
                "model_name_or_path": run.model,
                "model_patch": task.attempts[attempt - 1].patch,
            }
        )
    return out


def predictions_jsonl(run: RunResult, attempt: int = 1) -> str:
    """`predictions` as JSON Lines."""
    return "".join(json.dumps(p) + "\n" for p in predictions(run, attempt))
