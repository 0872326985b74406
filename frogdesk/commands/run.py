"""`frogdesk run`: one whole session headless in its own worktree, with Leaf's result files.

The session is started and run through the application core (frogdesk.core.workbench), the
same operations the TUI uses; this module only reads the options and prints.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from frogdesk.commands.attempts import (
    add_attempt_options,
    check_attempt_options,
    run_attempts_command,
)
from frogdesk.commands.backend_flags import BACKENDS, check_endpoint, chosen_backend, known_backend
from frogdesk.commands.common import config_path, load_settings
from frogdesk.commands.errors import UserError
from frogdesk.commands.operator import TerminalOperator
from frogdesk.commands.progress import LoadProgress, ProgressPrinter, stop_on_signals
from frogdesk.config import APPROVAL_SETTINGS, DEFAULT_MAX_STEPS, Settings
from frogdesk.core.model_ops import model_file, watched_backends
from frogdesk.core.ports import HeadlessWorkbench, RunningSession
from frogdesk.core.repo_model import with_repository_model
from frogdesk.core.repo_setup import check_repository
from frogdesk.core.status import other_dialect_lines
from frogdesk.core.workbench import CoreWorkbench, session_spec
from frogdesk.engine.kinds import SCRIPT, kind_of
from frogdesk.inert import inert_line, inert_text
from frogdesk.leaf.events import (
    Notice,
)
from frogdesk.leaf.records import recovery_counts
from frogdesk.models.errors import ModelError
from frogdesk.paths import AppPaths
from frogdesk.sessions.factories import BackendFactory


def register(sub: Any) -> None:
    """Add the subcommand parser."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "run",
        help="run one task headless in a sandboxed worktree",
        description=(
            "Runs TASK on the repository in its own git worktree and writes Leaf's result files "
            "(trajectory_seed-0.json, generated_seed-0.patch). Your repository is not touched "
            "unless --apply is given."
        ),
    )
    parser.add_argument("task", help="the task text (the model's first user message)")
    parser.add_argument("--repo", type=Path, default=Path("."), help="the repository (default: .)")
    parser.add_argument("--backend", choices=BACKENDS, default=None, help="engine backend")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--model", default=None, help="model spec or .gguf path (llama backend)")
    source.add_argument(
        "--endpoint", default=None, help="OpenAI-compatible base URL (openai backend)"
    )
    source.add_argument(
        "--script",
        type=Path,
        action="append",
        default=None,
        help="JSONL of raw replies (script backend); with --attempts N, once or once per attempt",
    )
    parser.add_argument("--output", type=Path, default=None, help="folder for the result files")
    parser.add_argument(
        "--max-steps", type=int, default=None, help=f"step budget (default {DEFAULT_MAX_STEPS})"
    )
    parser.add_argument("--max-context", type=int, default=None, help="context budget in tokens")
    parser.add_argument("--max-tokens-per-turn", type=int, default=None, help="cap per reply")
    parser.add_argument("--max-time", type=float, default=None, help="wall-clock budget in seconds")
    parser.add_argument("--temperature", type=float, default=None, help="sampling temperature")
    parser.add_argument("--seed", type=int, default=None, help="sampling seed")
    parser.add_argument("--sandbox", choices=("auto", "bwrap", "landlock", "none"), default=None)
    parser.add_argument(
        "--approve",
        choices=APPROVAL_SETTINGS,
        default=None,
        help="ask before Bash commands: always, untrusted (outside bash_allowlist), never, "
        "or auto (always at the none level); default: the bash_approval setting",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON summary on stdout")
    parser.add_argument("--apply", action="store_true", help="apply every change to the repository")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_attempt_options(parser)
    parser.set_defaults(func=main)


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "backend": args.backend,
        "max_steps": args.max_steps,
        "max_context_tokens": args.max_context,
        "max_tokens_per_turn": args.max_tokens_per_turn,
        "max_time": args.max_time,
        "temperature": args.temperature,
        "seed": args.seed,
        "sandbox": args.sandbox,
        "bash_approval": getattr(args, "approve", None),
        "openai_endpoint": args.endpoint,
    }


def main(args: argparse.Namespace) -> int:
    """Run the session to its end; exit 0 when the agent gave a final answer, 1 otherwise."""
    args.backend = chosen_backend(args.backend, args.endpoint)
    settings = load_settings(args, _overrides(args))
    backend: str = settings.engine.backend
    scripts: list[Path] = args.script or []
    if args.script is not None and (args.backend is None or kind_of(args.backend).replays_script):
        backend = SCRIPT.name
    known_backend(backend)
    attempts = args.attempts if args.attempts is not None else settings.loop.attempts
    check_attempt_options(args, attempts, len(scripts), settings.loop.check_timeout)
    if kind_of(backend).replays_script and args.script is None:
        raise UserError("the script backend needs --script FILE")
    check_endpoint(backend, args.endpoint or settings.engine.openai_endpoint)
    spec = session_spec(
        args.task,
        args.repo.expanduser(),
        settings,
        backend=backend,
        model=args.model or "",
        script=scripts[0] if scripts else None,
    )
    # a folder that is no repository is said first, before any model is looked at
    check_repository(spec.repo)
    if kind_of(backend).local_model and not args.model:
        pinned = with_repository_model(settings, spec.repo, config_path(args))
        if pinned is not settings:
            settings = pinned
            spec = dataclasses.replace(spec, model=settings.model)
    if kind_of(backend).local_model:
        try:  # a missing model is refused before a worktree is made for it
            model_file(spec.model, settings)
        except ModelError as exc:
            raise UserError(str(exc)) from None
    workbench = headless_workbench(args, settings, spec.repo)
    if attempts != 1 or len(scripts) > 1 or args.check is not None:
        return run_attempts_command(workbench, spec, attempts, [str(s) for s in scripts], args)
    return run_session(
        workbench, args, lambda printer: workbench.start(spec, TerminalOperator(printer))
    )


def headless_workbench(
    args: argparse.Namespace, settings: Settings, repo: Path
) -> HeadlessWorkbench:
    """The application core for one command: each session loads its own backend, a llama
    model's load shown on stderr; Bash commands that need approval are asked on the tty."""
    return CoreWorkbench(
        repo,
        settings,
        paths=AppPaths.default(),
        backend_factory=loading_backends(getattr(args, "quiet", False)),
    )


def loading_backends(quiet: bool) -> BackendFactory:
    """The default backends, a llama model's honest warnings on stderr before it loads, its
    load shown as a percentage, and each prompt's prefill as llama.cpp decodes it (tokens,
    rate, ETA)."""
    prefill = ProgressPrinter(sys.stderr, quiet)

    def warn(line: str) -> None:
        print(inert_line(f"frogdesk: {line}"), file=sys.stderr)

    if quiet:
        return watched_backends(warn)
    return watched_backends(warn, lambda: LoadProgress(sys.stderr), prefill.prefill)


def run_session(
    workbench: HeadlessWorkbench,
    args: argparse.Namespace,
    opener: Callable[[ProgressPrinter], RunningSession],
) -> int:
    """Open a session, run it to its end, write the results; shared with `sessions`.

    `opener` starts, opens, sends back or switches the session through the core; it may
    tell the user what it does through the printer.
    """
    printer = ProgressPrinter(sys.stderr, getattr(args, "quiet", False))
    session = opener(printer)
    try:
        active = session.prepare()
        printer.write(f"session {active.record.id} in {active.worktree.path}")
        printer.write(f"sandbox: {active.shell.level} ({active.shell.reason})")
        for warning in active.shell.warnings:
            printer(Notice(warning, "warning"))
        with stop_on_signals(printer) as cancel:
            session.run("", cancel, printer)
    finally:
        session.close()
    outcome = session.outcome
    assert outcome is not None  # run() returned, so the run ended
    output: Path = args.output or workbench.session_dir(outcome.record.id)
    traj_path, patch_path = outcome.write_results(output.expanduser())
    printer.write(f"wrote {traj_path} and {patch_path}")
    if getattr(args, "apply", False) and outcome.patch:
        printer.write(workbench.apply_all(outcome.record.id, printer.write))
    for line in other_dialect_lines(outcome.record.dialect, outcome.result.steps):
        printer.write(f"frogdesk: {line}")
    if args.json:
        summary = {
            "session_id": outcome.record.id,
            "exit_reason": outcome.result.exit_reason,
            "error": outcome.result.error,
            "dialect": outcome.record.dialect,
            "n_steps": outcome.result.n_steps,
            "output_dir": str(output.expanduser().resolve()),
            "files_changed": outcome.files_changed,
            "recoveries": recovery_counts(outcome.result.steps),
            "drafts": dict(sorted(outcome.record.drafts.items())),
        }
        sys.stdout.write(json.dumps(summary) + "\n")
    elif outcome.result.final_message:
        sys.stdout.write(inert_text(outcome.result.final_message) + "\n")
    return 0 if outcome.result.exit_reason == "agent" else 1
