"""`frogdesk eval`: run a suite of tasks on a model, store and show what it solved.

frogdesk eval SUITE [run's flags] [--attempts K] [--tasks PATTERN] [--resume RUN]
frogdesk eval compare RUN_A RUN_B
frogdesk eval export RUN [--attempt N] [--output FILE]
frogdesk eval runs
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from frogdesk.commands.backend_flags import BACKENDS, check_endpoint, chosen_backend, known_backend
from frogdesk.commands.common import UserError, load_settings
from frogdesk.commands.operator import TerminalOperator
from frogdesk.commands.progress import ProgressPrinter, stop_on_signals
from frogdesk.commands.run import loading_backends
from frogdesk.config import Settings
from frogdesk.core.model_ops import load_backend
from frogdesk.engine.registry import SCRIPT, kind_of
from frogdesk.evals.compare import compare, describe
from frogdesk.evals.evaluate import (
    Progress,
    check_resumable,
    evaluate,
    file_sha256,
    gguf_quant,
    new_run,
    run_settings,
)
from frogdesk.evals.export import predictions_jsonl
from frogdesk.evals.results import RAN, RunResult, TaskResult
from frogdesk.evals.runner import EvalBackend, TaskRun
from frogdesk.evals.store import EvalStore
from frogdesk.evals.suites import load_suite, select, skip_missing_tools
from frogdesk.evals.task import EvalError, EvalTask
from frogdesk.inert import inert_line
from frogdesk.leaf.events import LoopEvent, Notice
from frogdesk.models.errors import ModelError
from frogdesk.paths import AppPaths
from frogdesk.sessions.parts import resolve_model_path

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
    parser.add_argument("--model", default=None, help="model spec or .gguf path")
    parser.add_argument("--endpoint", default=None, help="OpenAI-compatible base URL")
    parser.add_argument(
        "--script",
        type=Path,
        default=None,
        help="script backend: one JSONL for every task, or a folder of TASK.jsonl "
        "(TASK.N.jsonl for attempt N)",
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
    parser.add_argument("--resume", default=None, metavar="RUN", help="continue a stored run")
    parser.add_argument("--attempt", type=int, default=1, help="export: which attempt's patch")
    parser.add_argument("--output", type=Path, default=None, help="export: the JSONL file")
    parser.add_argument("--json", action="store_true", help="print JSON on stdout")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(func=main)


def _store() -> EvalStore:
    return EvalStore(AppPaths.default().data_dir / "evals")


def main(args: argparse.Namespace) -> int:
    """Dispatch: a suite to run, or one of compare / export / runs."""
    try:
        if args.suite in ACTIONS:
            return _action(args)
        return _run(args)
    except EvalError as exc:
        raise UserError(str(exc)) from None


def _action(args: argparse.Namespace) -> int:
    store = _store()
    if args.suite == "compare":
        if len(args.runs) != 2:
            raise UserError("eval compare needs two runs: frogdesk eval compare RUN_A RUN_B")
        result = compare(store.load(args.runs[0]), store.load(args.runs[1]))
        out = json.dumps(result.to_json()) if args.json else "\n".join(describe(result))
        sys.stdout.write(out + "\n")
        return 0
    if args.suite == "export":
        if len(args.runs) != 1:
            raise UserError("eval export needs one run: frogdesk eval export RUN")
        if args.attempt < 1:
            raise UserError("--attempt counts from 1")
        text = predictions_jsonl(store.load(args.runs[0]), args.attempt)
        if args.output is not None:
            args.output.expanduser().write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
        return 0
    summaries = store.runs()
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


def _scripts_for(path: Path) -> Any:
    """The script of each attempt of a task, from one file or a folder of TASK[.N].jsonl."""

    def pick(task: EvalTask, attempts: int) -> tuple[str, ...]:
        if path.is_file():
            return (str(path),)
        per = [path / f"{task.name}.{i}.jsonl" for i in range(1, attempts + 1)]
        if attempts > 1 and all(p.is_file() for p in per):
            return tuple(str(p) for p in per)
        one = path / f"{task.name}.jsonl"
        if one.is_file():
            return (str(one),)
        raise EvalError(f"no script for this task ({one.name} in {path})")

    return pick


def _tree_sha(path: Path) -> str:
    if path.is_file():
        return file_sha256(path)
    digest = hashlib.sha256()
    for item in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(item.relative_to(path).as_posix().encode() + b"\0")
        digest.update(item.read_bytes())
    return digest.hexdigest()


def _backend(args: argparse.Namespace, settings: Settings) -> tuple[EvalBackend, str, str, str]:
    """The run's backend (a llama model loaded once), its model name, sha256 and quant."""
    kind = chosen_backend(args.backend, args.endpoint) or (
        SCRIPT.name if args.script is not None else settings.backend
    )
    known_backend(kind)
    if kind_of(kind).replays_script:
        if args.script is None or not args.script.exists():
            raise UserError("the script backend needs --script FILE or FOLDER that exists")
        script = args.script.expanduser().resolve()
        backend = EvalBackend(kind, scripts=_scripts_for(script))
        return backend, script.name, _tree_sha(script), ""
    if kind_of(kind).remote_endpoint:
        endpoint = args.endpoint or settings.openai_endpoint
        check_endpoint(kind, endpoint)
        model = args.model or settings.openai_model
        sha = hashlib.sha256(f"{endpoint}|{model}".encode()).hexdigest()
        return EvalBackend(kind, model=model, endpoint=endpoint), model or endpoint, sha, ""
    try:
        path = resolve_model_path(args.model or settings.model, settings)
    except ModelError as exc:
        raise UserError(str(exc)) from None
    sha = file_sha256(path)
    factory = loading_backends(args.quiet)
    progress = None if args.quiet else _load_line
    loaded = load_backend(settings, path, progress)
    return (
        EvalBackend(kind, model=str(path), loaded=loaded, factory=factory),
        path.name,
        sha,
        gguf_quant(path),
    )


def _load_line(fraction: float) -> None:
    end = "\n" if fraction >= 1 else ""
    print(f"\rloading the model: {int(fraction * 100):3d}%", end=end, file=sys.stderr, flush=True)


def _task_line(p: Progress, attempts: int) -> str:
    r = p.result
    eta = f"  ETA {p.eta:.0f}s" if p.eta is not None and p.done < p.total else ""
    if r.status != RAN:
        return f"[{p.done}/{p.total}] {r.task}: {r.status} ({r.note}){eta}"
    won = sum(a.solved for a in r.attempts)
    steps = sum(a.steps for a in r.attempts)
    verdict = "solved" if r.solved else "not solved"
    return f"[{p.done}/{p.total}] {r.task}: {verdict} {won}/{attempts}, {steps} steps, {p.seconds:.1f}s{eta}"


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
    exits = ",".join(sorted({x.exit_reason for x in a}))
    return (
        f"{t.task:<24} {'yes' if t.solved else 'no':<7} {won:>2}/{k:<2} {sum(x.steps for x in a):>5} "
        f"{sum(x.tool_calls for x in a):>5} {recov:>5} {rate:>6.1f} {sum(x.wall_seconds for x in a):>7.1f}  {exits}"
    )


def _run(args: argparse.Namespace) -> int:
    if not 1 <= args.attempts <= 16:
        raise UserError(f"--attempts must be between 1 and 16, got {args.attempts}")
    settings = load_settings(args, _overrides(args))
    patterns = [p for item in args.tasks or [] for p in item.split(",") if p]
    suite = skip_missing_tools(
        select(load_suite(args.suite, check=args.check, timeout=args.timeout), patterns)
    )
    printer = ProgressPrinter(sys.stderr, args.quiet)
    for name, why in suite.problems.items():
        printer.write(f"frogdesk eval: {name}: {why}")
    backend, model, sha, quant = _backend(args, settings)
    recorded = run_settings(settings, backend.kind, args.attempts)
    store = _store()
    if args.resume:
        run = store.load(args.resume)
        check_resumable(run, suite, recorded, sha)
        printer.write(f"resuming {run.run_id}: {len(run.tasks)} tasks already done")
    else:
        run = new_run(
            suite, model=model, model_sha256=sha, quant=quant, backend=backend.kind,
            attempts=args.attempts, settings=recorded,
        )  # fmt: skip
    printer.write(
        f"eval {run.run_id}: {len(suite.tasks)} tasks of {suite.name}, {args.attempts} attempt(s) each"
    )

    def on_event(index: int, event: LoopEvent) -> None:
        if isinstance(event, Notice):
            printer(event)

    try:
        with stop_on_signals(printer) as cancel:
            task_run = TaskRun(
                AppPaths.default(), settings, backend, args.attempts, TerminalOperator(printer),
                precheck=not args.no_precheck, cancel=cancel, on_event=on_event,
            )  # fmt: skip
            evaluate(
                suite, task_run, run, store,
                on_progress=lambda p: printer.write(_task_line(p, args.attempts)),
                on_start=lambda name, i, n: None if args.quiet else printer.write(f"task {i + 1}/{n}: {name} ..."),
            )  # fmt: skip
    finally:
        if backend.loaded is not None:
            backend.loaded.close()
    if not run.finished:
        printer.write(
            f"stopped: {len(run.tasks)} tasks stored; continue with "
            f"`frogdesk eval {args.suite} --resume {run.run_id}` and the same flags"
        )
    if args.json:
        sys.stdout.write(json.dumps(run.to_json()) + "\n")
    else:
        sys.stdout.write("\n".join(table(run)) + "\n")
    printer.write(f"stored in {store.run_dir(run)}")
    return 0 if run.finished else 130
