"""`frogdesk eval`: run a suite of tasks on a model, store and show what it solved.

frogdesk eval SUITE [run's flags] [--model A --model B ...] [--attempts K] [--tasks PATTERN]
              [--resume RUN ...]
frogdesk eval compare RUN_A RUN_B
frogdesk eval export RUN [--attempt N] [--output FILE]
frogdesk eval runs
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from typing import Any

from frogdesk.commands.backend_flags import BACKENDS, check_endpoint, chosen_backend, known_backend
from frogdesk.commands.common import load_settings
from frogdesk.commands.errors import UserError
from frogdesk.commands.eval_progress import EvalMeter, EvalPrinter, clock_text, resume_command
from frogdesk.commands.operator import TerminalOperator
from frogdesk.commands.progress import LoadProgress, stop_on_signals
from frogdesk.commands.run import loading_backends
from frogdesk.config import Settings
from frogdesk.core.eval_plan import (
    EvalPlan,
    ModelRun,
    compare_stored,
    endpoint_models,
    export_stored,
    local_models,
    open_suite,
    plan_eval,
    script_models,
    scripts_for,
    stored_runs,
)
from frogdesk.core.eval_runner import EvalBackend, TaskRun
from frogdesk.core.evaluating import Progress, evaluate, new_run, run_settings
from frogdesk.core.model_ops import load_backend
from frogdesk.core.status import ending_words
from frogdesk.engine.kinds import SCRIPT, kind_of
from frogdesk.evals.errors import EvalError
from frogdesk.evals.results import RAN, RunResult, TaskResult
from frogdesk.inert import inert_line
from frogdesk.leaf.events import LoopEvent, Notice
from frogdesk.models.errors import ModelError
from frogdesk.paths import AppPaths

ACTIONS = ("compare", "export", "runs")


def register(sub: Any) -> None:
    """Add the subcommand parser."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "eval",
        help="measure what a model solves on a suite of tasks",
        description=(
            "Runs each task of SUITE (`starter`, a folder of FrogDesk task folders, or an "
            "Exercism clone) in its own fresh repository and session, checks it with the tests "
            "put back, and stores the results per model file and settings. Also: "
            "`eval compare RUN_A RUN_B`, `eval export RUN`, `eval runs`."
        ),
    )
    parser.add_argument("suite", help="starter, a folder of tasks, or compare/export/runs")
    parser.add_argument("runs", nargs="*", help="run ids (compare: two; export: one)")
    parser.add_argument("--backend", choices=BACKENDS, default=None, help="engine backend")
    parser.add_argument(
        "--model",
        action="append",
        default=None,
        help="model spec or .gguf path; give it again to run several models one after another",
    )
    parser.add_argument("--endpoint", default=None, help="OpenAI-compatible base URL")
    parser.add_argument(
        "--script",
        type=Path,
        action="append",
        default=None,
        help="script backend: one JSONL for every task, or a folder of TASK.jsonl "
        "(TASK.N.jsonl for attempt N); given again, each stands for another model",
    )
    parser.add_argument("--max-steps", type=int, default=None, help="step budget per attempt")
    parser.add_argument("--max-time", type=float, default=None, help="seconds per attempt")
    parser.add_argument("--temperature", type=float, default=None, help="sampling temperature")
    parser.add_argument("--seed", type=int, default=None, help="sampling seed (attempt i: +i)")
    parser.add_argument("--sandbox", choices=("auto", "bwrap", "landlock", "none"), default=None)
    parser.add_argument("--attempts", type=int, default=1, metavar="K", help="attempts per task")
    parser.add_argument(
        "--tasks", action="append", default=None, metavar="PATTERN", help="only tasks matching"
    )
    parser.add_argument(
        "--check", default="", help="Exercism: check command instead of the track's"
    )
    parser.add_argument("--timeout", type=float, default=None, help="Exercism: seconds per check")
    parser.add_argument(
        "--no-precheck", action="store_true", help="skip checking that each task fails untouched"
    )
    parser.add_argument(
        "--resume",
        action="append",
        default=None,
        metavar="RUN",
        help="continue a stored run (the model it was made with); give one per model",
    )
    parser.add_argument("--attempt", type=int, default=1, help="export: which attempt's patch")
    parser.add_argument("--output", type=Path, default=None, help="export: the JSONL file")
    parser.add_argument("--json", action="store_true", help="print JSON on stdout")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    """Dispatch: a suite to run, or one of compare / export / runs."""
    try:
        if args.suite in ACTIONS:
            return _action(args)
        return _run(args)
    except EvalError as exc:
        raise UserError(str(exc)) from None


def _action(args: argparse.Namespace) -> int:
    paths = AppPaths.default()
    if args.suite == "compare":
        if len(args.runs) != 2:
            raise UserError("eval compare needs two runs: frogdesk eval compare RUN_A RUN_B")
        figures, words = compare_stored(paths, args.runs[0], args.runs[1])
        out = json.dumps(figures) if args.json else "\n".join(words)
        sys.stdout.write(out + "\n")
        return 0
    if args.suite == "export":
        if len(args.runs) != 1:
            raise UserError("eval export needs one run: frogdesk eval export RUN")
        if args.attempt < 1:
            raise UserError("--attempt counts from 1")
        text = export_stored(paths, args.runs[0], args.attempt)
        if args.output is not None:
            args.output.expanduser().write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
        return 0
    summaries = stored_runs(paths)
    if args.json:
        sys.stdout.write(json.dumps(summaries) + "\n")
    for s in [] if args.json else summaries:
        sys.stdout.write(
            f"{s['run_id']}  {s['suite']}  {Path(str(s['model'])).name}  {s['quant'] or '-'}  "
            f"{s['solved']}/{s['total']}  Pass@{s['attempts_per_task']} {s['pass_at_k']:.0%}"
            f"{'' if s['finished'] else '  (unfinished)'}\n"
        )
    return 0


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "backend": args.backend,
        "max_steps": args.max_steps,
        "max_time": args.max_time,
        "temperature": args.temperature,
        "seed": args.seed,
        "sandbox": args.sandbox,
        "openai_endpoint": args.endpoint,
    }


def _kind(args: argparse.Namespace, settings: Settings) -> str:
    kind = chosen_backend(args.backend, args.endpoint) or (
        SCRIPT.name if args.script else settings.engine.backend
    )
    known_backend(kind)
    return kind


def _models(args: argparse.Namespace, settings: Settings) -> list[ModelRun]:
    """Each model the command runs, in the order given (scripts stand for models with the
    script backend), identified without loading anything."""
    kind = _kind(args, settings)
    if kind_of(kind).replays_script:
        return script_models(kind, args.script or [])
    if kind_of(kind).remote_endpoint:
        endpoint = args.endpoint or settings.engine.openai_endpoint
        check_endpoint(kind, endpoint)
        return endpoint_models(kind, endpoint, args.model or [settings.engine.openai_model])
    try:
        return local_models(kind, args.model or [settings.model], settings)
    except ModelError as exc:
        raise UserError(str(exc)) from None


def _backend(model: ModelRun, settings: Settings, quiet: bool) -> EvalBackend:
    """The model's backend: a llama model is loaded here, once for all its tasks."""
    if model.script is not None:
        return EvalBackend(model.kind, scripts=scripts_for(model.script))
    if model.path is None:
        return EvalBackend(model.kind, model=model.model, endpoint=model.endpoint)
    factory = loading_backends(quiet)
    loaded = load_backend(settings, model.path, None if quiet else LoadProgress(sys.stderr))
    return EvalBackend(model.kind, model=str(model.path), loaded=loaded, factory=factory)


def _task_line(p: Progress, attempts: int, left: float | None) -> str:
    """A finished task's line; `left` is the whole command's ETA (every model's tasks)."""
    r = p.result
    eta = f"  ETA {clock_text(left)}" if left is not None else ""
    if r.status != RAN:
        return f"[{p.done}/{p.total}] {r.task}: {r.status} ({r.note}){eta}"
    won = sum(a.solved for a in r.attempts)
    steps = sum(a.steps for a in r.attempts)
    verdict = "solved" if r.solved else "not solved"
    # the decode rate beside the verdict: a task timed out on a busy machine shows as slow
    rate = sum(a.tokens_per_second for a in r.attempts) / len(r.attempts) if r.attempts else 0.0
    return (
        f"[{p.done}/{p.total}] {r.task}: {verdict} {won}/{attempts}, {steps} steps, "
        f"{p.seconds:.1f}s, {rate:.1f} tok/s per attempt{eta}"
    )


def table(run: RunResult) -> list[str]:
    """The run as a table: one row per task, then the totals."""
    rows = [
        f"{'task':<24} {'solved':<7} {'ok/K':>5} {'steps':>5} {'calls':>5} {'recov':>5} {'tok/s':>6} {'wall s':>7}  exit"
    ]
    for t in run.tasks:
        rows.append(_row(t, run.attempts))
    rows.append(
        f"solved {run.solved}/{run.total}  Avg@{run.attempts} {run.avg_at_k:.1%}  "
        f"Pass@{run.attempts} {run.pass_at_k:.1%}  ({run.model}, {run.quant or run.backend})"
    )
    return rows


def _row(t: TaskResult, k: int) -> str:
    if t.status != RAN:
        return f"{t.task:<24} {t.status:<7} {'':>5} {'':>5} {'':>5} {'':>5} {'':>6} {'':>7}  {inert_line(t.note)[:60]}"
    a = t.attempts
    won = sum(x.solved for x in a)
    recov = sum(sum(x.recoveries.values()) for x in a)
    rate = sum(x.tokens_per_second for x in a) / len(a) if a else 0.0
    exits = ", ".join(sorted({ending_words(x.exit_reason) for x in a}))
    return (
        f"{t.task:<24} {'yes' if t.solved else 'no':<7} {won:>2}/{k:<2} {sum(x.steps for x in a):>5} "
        f"{sum(x.tool_calls for x in a):>5} {recov:>5} {rate:>6.1f} {sum(x.wall_seconds for x in a):>7.1f}  {exits}"
    )


def _run(args: argparse.Namespace) -> int:
    if not 1 <= args.attempts <= 16:
        raise UserError(f"--attempts must be between 1 and 16, got {args.attempts}")
    settings = load_settings(args, _overrides(args))
    patterns = [p for item in args.tasks or [] for p in item.split(",") if p]
    suite = open_suite(args.suite, patterns, check=args.check, timeout=args.timeout)
    printer = EvalPrinter(sys.stderr, args.quiet)
    for name, why in suite.problems.items():
        printer.write(f"frogdesk eval: {name}: {why}")
    models = _models(args, settings)
    recorded = run_settings(settings, models[0].kind, args.attempts)
    plan = plan_eval(AppPaths.default(), suite, models, recorded, args.resume or [])
    todo = plan.todo()
    printer.meter = EvalMeter(todo, args.attempts)
    runs: list[RunResult] = []
    with stop_on_signals(printer) as cancel:
        for model in models:
            if cancel.is_set():
                break
            runs.append(_run_model(args, settings, plan, printer, cancel, model))
    printer.end_bar()
    stopped = next((i for i, r in enumerate(runs) if not r.finished), None)
    if stopped is not None or len(runs) < len(models):
        cut = runs[stopped if stopped is not None else -1]
        left = models[stopped if stopped is not None else len(runs) :]
        flag = "--script" if models[0].script is not None else "--model"
        again = resume_command(args, [m.given for m in left if m.given], flag, cut.run_id)
        printer.write(f"stopped: {len(cut.tasks)} tasks of {cut.run_id} stored; continue with:")
        printer.write(f"  {again}")
    if args.json:
        shown: dict[str, Any] = (
            runs[0].to_json() if len(models) == 1 else {"runs": [r.to_json() for r in runs]}
        )
        sys.stdout.write(json.dumps(shown) + "\n")
    else:
        sys.stdout.write("\n\n".join("\n".join(table(r)) for r in runs) + "\n")
    for r in runs:
        printer.write(f"stored in {plan.store.run_dir(r)}")
    return 0 if all(r.finished for r in runs) and len(runs) == len(models) else 130


def _run_model(
    args: argparse.Namespace,
    settings: Settings,
    plan: EvalPlan,
    printer: EvalPrinter,
    cancel: threading.Event,
    model: ModelRun,
) -> RunResult:
    """One model's whole run: loaded once, every task, closed before the next model."""
    meter = printer.meter
    assert meter is not None
    backend = _backend(model, settings, args.quiet)
    try:
        suite = plan.suite
        run = plan.resumed.get(model.sha256)
        if run is not None:
            printer.write(f"resuming {run.run_id}: {len(run.tasks)} tasks already done")
        else:
            run = new_run(
                suite, model=model.name, model_sha256=model.sha256, quant=model.quant,
                backend=model.kind, attempts=args.attempts, settings=plan.recorded,
            )  # fmt: skip
        printer.write(
            f"eval {run.run_id}: {model.name}, {len(suite.tasks)} tasks of {suite.name}, "
            f"{args.attempts} attempt(s) each"
        )

        def on_event(index: int, event: LoopEvent) -> None:
            if isinstance(event, Notice):
                printer(event)
            elif index + 1 != meter.attempt:
                meter.attempt = index + 1
                printer.draw()

        def on_start(name: str, i: int, n: int) -> None:
            meter.start(model.name, name)
            if not printer.terminal and not args.quiet:
                printer.write(f"task {i + 1}/{n}: {name} ...")
            printer.draw()

        def on_progress(p: Progress) -> None:
            meter.finish(p.seconds)
            meter.task = ""  # no bar between tasks
            eta = meter.eta() if meter.done < meter.total else None
            printer.write(_task_line(p, args.attempts, eta))

        task_run = TaskRun(
            AppPaths.default(), settings, backend, args.attempts, TerminalOperator(printer),
            precheck=not args.no_precheck, cancel=cancel, on_event=on_event,
        )  # fmt: skip
        evaluate(suite, task_run, run, plan.store, on_progress=on_progress, on_start=on_start)
        return run
    finally:
        if backend.loaded is not None:
            backend.loaded.close()
