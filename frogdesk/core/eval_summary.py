"""Stored eval results in a line, for where a model is listed (`models list`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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


def newest_results(files: Iterable[str], data_dir: Path) -> dict[str, dict[str, Any]]:
    """The newest finished run's summary of each listed model file, by file name."""
    runs = [s for s in EvalStore(data_dir / "evals").runs() if s.get("finished")]
    found: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(Path(f).name for f in files):
        newest = next((s for s in runs if Path(str(s.get("model", ""))).name == name), None)
        if newest is not None:
            found[name] = newest
    return found


def eval_lines(files: Iterable[str], data_dir: Path) -> list[str]:
    """One line per listed model file with a finished eval run: its newest run's figures."""
    return [
        f"eval: {name}: {describe_summary(newest)} (run {newest['run_id']})"
        for name, newest in newest_results(files, data_dir).items()
    ]


def beside_drift(
    measured: Mapping[str, str], files: Mapping[str, Path | None], data_dir: Path
) -> dict[str, str]:
    """The chooser's drift words by row label, each followed by the newest eval result of the
    row's file where there is one ("…; solved 11/15 of starter (Avg@3), Pass@3 13/15")."""
    results = newest_results([str(p) for p in files.values() if p is not None], data_dir)
    out = dict(measured)
    for label, path in files.items():
        summary = results.get(path.name) if path is not None else None
        if summary is not None:
            out[label] = f"{measured.get(label, 'not measured')}; {describe_summary(summary)}"
    return out
