"""Running one task: a fresh repository from its snapshot, K attempts through the core, the
check (files put back first) in each attempt's sandbox, and what each attempt spent.

Nothing here runs a loop of its own: the attempts are the core's (`CoreWorkbench.start_attempts`,
the same sessions, sandbox and check as `frogdesk run --attempts K`), and the verdict is the
check's exit code, never the model's final answer.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from frogdesk.attempts.record import AttemptResult
from frogdesk.attempts.spec import AttemptsSpec
from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.durable import pid_alive
from frogdesk.engine.chat import Backend
from frogdesk.engine.kinds import SCRIPT, kind_of
from frogdesk.evals.errors import EvalError
from frogdesk.evals.repo import make_task_repo
from frogdesk.evals.restore import check_command
from frogdesk.evals.results import BROKEN, ERROR, RAN, AttemptRecord, TaskResult
from frogdesk.evals.task import EvalTask
from frogdesk.leaf.events import LoopEvent
from frogdesk.leaf.trajectory import PATCH_FILE
from frogdesk.paths import AppPaths
from frogdesk.sessions.factories import BackendFactory
from frogdesk.sessions.operator import NOBODY, Operator

NOOP_REPLY = "I will not change anything.\n</think>\n\nNothing to do."
"""The precheck's only reply: a final answer, so the check sees the untouched snapshot."""


@dataclass(frozen=True)
class EvalBackend:
    """What every session of the eval runs on."""

    kind: str
    """`llama`, `openai` or `script`."""
    model: str = ""
    """The .gguf path (llama) or model name (openai)."""
    endpoint: str = ""
    scripts: Callable[[EvalTask, int], tuple[str, ...]] | None = None
    """Script backend: the script per attempt of a task (EvalError when there is none)."""
    loaded: Backend | None = None
    """A llama backend loaded once for the whole run (its weights serve every task)."""
    factory: BackendFactory | None = None


@dataclass
class TaskRun:
    """Where and how the tasks run: the app's paths, the settings, the approval hook."""

    paths: AppPaths
    settings: Settings
    backend: EvalBackend
    attempts: int = 1
    operator: Operator = NOBODY
    """Who is asked about a command that needs approval (the `none` level)."""
    precheck: bool = True
    """Run the check on the untouched snapshot first; a pass marks the task broken."""
    cancel: threading.Event = dataclasses.field(default_factory=threading.Event)
    on_event: Callable[[int, LoopEvent], None] = lambda index, event: None


def _measure(workbench: CoreWorkbench, result: AttemptResult, results_root: Path) -> AttemptRecord:
    """The attempt's figures from its own stored transcript and record."""
    check = result.check
    record = AttemptRecord(
        index=result.index,
        solved=bool(check is not None and check.passed and result.exit_reason != "crashed"),
        session_id=result.session_id,
        seed=result.seed,
        exit_reason=result.exit_reason,
        error=result.error,
        steps=result.n_steps,
        wall_seconds=result.seconds,
        check_exit=check.exit_code if check is not None else None,
        check_summary=check.summary if check is not None else "",
        check_seconds=check.seconds if check is not None else 0.0,
        check_timed_out=bool(check is not None and check.timed_out),
    )
    if not result.session_id:
        return record
    store = workbench.service.store
    with contextlib.suppress(Exception):  # a crashed attempt may have left no transcript
        stored = store.get(result.session_id)
        record.recoveries = dict(sorted(stored.recoveries.items()))
        steps = store.read_transcript(result.session_id).steps
        record.tool_calls = sum(len(s.observations) for s in steps)
        usages = [s.usage for s in steps if s.usage is not None]
        if result.cut_usage is not None:  # the reply a stop cut off is no step
            usages.append(result.cut_usage)
        record.prefill_tokens = sum(u.evaluated_tokens for u in usages)
        record.decoded_tokens = sum(u.completion_tokens for u in usages)
        record.prompt_tokens = usages[-1].prompt_tokens if usages else 0
        decode = sum(u.decode_seconds for u in usages)
        seconds = decode if decode > 0 else result.seconds
        record.tokens_per_second = record.decoded_tokens / seconds if seconds > 0 else 0.0
    patch = results_root / result.session_id / PATCH_FILE.format(seed=0)
    with contextlib.suppress(OSError):
        record.patch = patch.read_text(encoding="utf-8")
    return record


def _workbench(run: TaskRun, repo: Path) -> CoreWorkbench:
    return CoreWorkbench(
        repo,
        run.settings,
        paths=run.paths,
        backend=run.backend.loaded,
        backend_factory=run.backend.factory,
    )


def _spec(
    run: TaskRun, task: EvalTask, repo: Path, n: int, scripts: tuple[str, ...], command: str
) -> AttemptsSpec:
    backend = run.backend
    return AttemptsSpec(
        task.text,
        repo,
        n,
        backend=SCRIPT.name if scripts else backend.kind,
        model=backend.model,
        endpoint=backend.endpoint,
        scripts=scripts,
        check=command,
        check_timeout=task.timeout,
    )


def _discard(workbench: CoreWorkbench, ids: Sequence[str]) -> None:
    for session_id in ids:
        with contextlib.suppress(Exception):  # cleaning up never costs a finished result
            workbench.service.discard(session_id)


def _precheck(run: TaskRun, task: EvalTask, repo: Path, command: str, scratch: Path) -> str:
    """ "" when the check fails on the untouched snapshot (as it must), else why the task is broken."""
    noop = scratch / "noop.jsonl"
    noop.write_text(json.dumps({"text": NOOP_REPLY}) + "\n", encoding="utf-8")
    workbench = _workbench(run, repo)
    spec = _spec(run, task, repo, 1, (str(noop),), command)
    outcome = workbench.start_attempts(spec, run.operator, run.cancel, lambda i, e: None)
    _discard(workbench, [a.session_id for a in outcome.attempts if a.session_id])
    check = outcome.attempts[0].check
    if check is not None and check.passed:
        return "its check passes before the model did anything: the task is broken"
    return ""


def run_task(run: TaskRun, task: EvalTask) -> TaskResult:
    """The task's K attempts, each in its own session on a fresh copy of the snapshot.

    A task that cannot run (no script for it, a session that cannot start) is an ERROR
    result with the reason; a cancelled run raises nothing but leaves attempts `cancelled`.
    """
    scratch = Path(
        tempfile.mkdtemp(prefix=f"eval-{os.getpid()}-{task.name}-", dir=_scratch_root(run.paths))
    )
    try:
        command = check_command(task)
        scripts: tuple[str, ...] = ()
        if kind_of(run.backend.kind).replays_script:
            if run.backend.scripts is None:
                raise EvalError("the script backend needs --script")
            scripts = run.backend.scripts(task, run.attempts)
        repo = make_task_repo(task, scratch / "repo")
        if run.precheck:
            broken = _precheck(run, task, repo, command, scratch)
            if broken:
                return TaskResult(task.name, BROKEN, broken)
        workbench = _workbench(run, repo)
        spec = _spec(run, task, repo, run.attempts, scripts, command)
        results_root = scratch / "results"
        outcome = workbench.start_attempts(
            spec, run.operator, run.cancel, run.on_event, results_root=results_root
        )
        ordered = sorted(outcome.attempts, key=lambda a: a.index)
        records = [_measure(workbench, a, results_root) for a in ordered]
        _discard(workbench, [a.session_id for a in ordered if a.session_id])
        return TaskResult(task.name, RAN, "", records)
    except EvalError as exc:
        return TaskResult(task.name, ERROR, str(exc))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


SCRATCH = re.compile(r"eval-(\d+)-")
"""Scratch folders are named for the process that made them."""


def _scratch_root(paths: AppPaths) -> Path:
    """Task repositories live under the app's cache, not in the user's folders; what a killed
    eval left there (its process gone) is removed first."""
    root = paths.cache_dir / "eval-repos"
    root.mkdir(parents=True, exist_ok=True)
    for entry in root.iterdir():
        found = SCRATCH.match(entry.name)
        if found is not None and not pid_alive(int(found[1])):
            shutil.rmtree(entry, ignore_errors=True)
    return root
