"""Stored eval results in a line, for where a model is listed (`models list`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from frogdesk.evals.store import EvalStore


def describe_summary(summary: dict[str, Any]) -> str:
    """One stored run's summary as "solved 11/15 of starter (Avg@3), Pass@3 13/15"."""
    k = summary.get("attempts_per_task", 1)
    total = summary.get("total", 0)
    text = f"solved {round(summary.get('avg_at_k', 0.0) * total)}/{total} of {summary.get('suite')}"
    if k > 1:
        text += f" (Avg@{k}), Pass@{k} {summary.get('solved', 0)}/{total}"
    return text


def eval_lines(files: Iterable[str], data_dir: Path) -> list[str]:
    """One line per listed model file with a finished eval run: its newest run's figures."""
    runs = [s for s in EvalStore(data_dir / "evals").runs() if s.get("finished")]
    lines: list[str] = []
    for name in dict.fromkeys(Path(f).name for f in files):
        newest = next((s for s in runs if Path(str(s.get("model", ""))).name == name), None)
        if newest is not None:
            lines.append(f"eval: {name}: {describe_summary(newest)} (run {newest['run_id']})")
    return lines
