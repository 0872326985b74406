"""A whole eval run: the suite's tasks one after another, each result stored as it ends."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frogdesk import __version__
from frogdesk.config import Settings
from frogdesk.core.eval_runner import TaskRun, run_task
from frogdesk.engine.llama.errors import ModelLoadError
from frogdesk.engine.llama.load.gguf import read_gguf_header
from frogdesk.evals.errors import EvalError
from frogdesk.evals.results import SKIPPED, RunResult, TaskResult
from frogdesk.evals.store import EvalStore, new_run_id
from frogdesk.evals.suites import Suite
from frogdesk.models.gguf_info import file_type_name
from frogdesk.models.model_warnings import recorded_quant

RESULT_SETTINGS = (
    "max_steps",
    "max_context_tokens",
    "max_tokens_per_turn",
    "max_time",
    "stop_after_repeats",
    "temperature",
    "seed",
    "context_size",
    "kv_cache_type",
    "sandbox",
)
"""The settings that change what a model solves, recorded with every run."""


def file_sha256(path: Path) -> str:
    """The sha256 of a file, read in 8 MiB pieces."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(8 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def gguf_quant(path: Path) -> str:
    """The quant a GGUF records (Q4_K_M), else its file name's, else ""."""
    try:
        code = read_gguf_header(path).metadata.get("general.file_type")
    except (ModelLoadError, OSError, ValueError):
        return ""
    return recorded_quant(file_type_name(code if isinstance(code, int) else None, path)) or ""


def run_settings(settings: Settings, backend: str, attempts: int) -> dict[str, Any]:
    """The settings recorded with a run (and hashed into its store folder)."""
    out: dict[str, Any] = {k: settings.get(k) for k in RESULT_SETTINGS}
    out.update(backend=backend, attempts=attempts)
    return out


@dataclass
class Progress:
    """What the progress line shows after each task."""

    done: int
    total: int
    result: TaskResult
    seconds: float
    """This task's wall time."""
    eta: float | None
    """Seconds left at the measured rate (None before the first timed task)."""


def evaluate(
    suite: Suite,
    task_run: TaskRun,
    run: RunResult,
    store: EvalStore,
    on_progress: Callable[[Progress], None] = lambda p: None,
    on_start: Callable[[str, int, int], None] = lambda name, i, n: None,
) -> RunResult:
    """Run the suite's tasks that `run` has not finished yet (all, for a new run), storing
    each result durably as it ends; the problems the suite found become SKIPPED/ERROR lines.

    A cancelled run stops after the task it was in, that task not stored (a resume redoes it).
    """
    done = {t.task for t in run.tasks}
    for name, why in suite.problems.items():
        if name not in done:
            status = SKIPPED if why.startswith("skipped:") else "error"
            result = TaskResult(name, status, why)
            run.tasks.append(result)
            store.save_task(run, result)
    store.save_run(run)
    todo = [t for t in suite.tasks if t.name not in done]
    timed: list[float] = []
    for index, task in enumerate(todo):
        if task_run.cancel.is_set():
            break
        on_start(task.name, index, len(todo))
        started = time.monotonic()
        result = run_task(task_run, task)
        if task_run.cancel.is_set():
            break  # its attempts were cut short: not a result
        seconds = time.monotonic() - started
        timed.append(seconds)
        run.tasks.append(result)
        store.save_task(run, result)
        left = len(todo) - index - 1
        eta = sum(timed) / len(timed) * left
        on_progress(Progress(index + 1, len(todo), result, seconds, eta))
    if not task_run.cancel.is_set():
        run.finished = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    store.save_run(run)
    return run


def new_run(
    suite: Suite,
    *,
    model: str,
    model_sha256: str,
    quant: str,
    backend: str,
    attempts: int,
    settings: dict[str, Any],
) -> RunResult:
    """A run not started yet."""
    return RunResult(
        run_id=new_run_id(),
        suite=suite.name,
        layout=suite.layout,
        model=model,
        model_sha256=model_sha256,
        quant=quant,
        backend=backend,
        attempts=attempts,
        settings=settings,
        frogdesk_version=__version__,
        started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )


def check_resumable(run: RunResult, suite: Suite, settings: dict[str, Any], sha: str) -> None:
    """Refuse to resume a run with another suite, model file or settings (mixed results)."""
    if run.suite != suite.name:
        raise EvalError(f"run {run.run_id} is of suite {run.suite!r}, not {suite.name!r}")
    if run.model_sha256 != sha:
        raise EvalError(f"run {run.run_id} was made with another model file")
    if run.settings != settings:
        raise EvalError(f"run {run.run_id} was made with other settings: give the same flags")
