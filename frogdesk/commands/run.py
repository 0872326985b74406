"""`frogdesk run`: one whole session headless in its own worktree, with Leaf's result files.

The session is started and run through the application core (frogdesk.core.workbench), the
same operations the TUI uses; this module only reads the options and prints.
"""

from __future__ import annotations

import argparse
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
from frogdesk.commands.common import UserError, load_settings
from frogdesk.commands.progress import ProgressPrinter, ask_on_tty, stop_on_signals
from frogdesk.config import Settings
from frogdesk.core.workbench import CoreSession, CoreWorkbench, session_spec
from frogdesk.engine.llama.errors import ModelLoadError
from frogdesk.engine.llama.gguf import read_gguf_header
from frogdesk.inert import inert_line, inert_text
from frogdesk.leaf.events import (
    Notice,
)
from frogdesk.leaf.records import recovery_counts
from frogdesk.leaf.trajectory import write_results
from frogdesk.models.errors import ModelError
from frogdesk.models.gguf_info import file_type_name
from frogdesk.models.model_warnings import is_frognano, model_warnings, recorded_quant
from frogdesk.models.spec import parse_filename
from frogdesk.paths import AppPaths
from frogdesk.sessions.parts import BackendFactory, default_backend, resolve_model_path

BACKENDS = ("llama", "openai", "script")


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
    parser.add_argument("--max-steps", type=int, default=None, help="step budget (default 150)")
    parser.add_argument("--max-context", type=int, default=None, help="context budget in tokens")
    parser.add_argument("--max-tokens-per-turn", type=int, default=None, help="cap per reply")
    parser.add_argument("--max-time", type=float, default=None, help="wall-clock budget in seconds")
    parser.add_argument("--temperature", type=float, default=None, help="sampling temperature")
    parser.add_argument("--seed", type=int, default=None, help="sampling seed")
    parser.add_argument("--sandbox", choices=("auto", "bwrap", "landlock", "none"), default=None)
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
        "openai_endpoint": args.endpoint,
    }


def main(args: argparse.Namespace) -> int:
    """Run the session to its end; exit 0 when the agent gave a final answer, 1 otherwise."""
    settings = load_settings(args, _overrides(args))
    backend = settings.backend
    scripts: list[Path] = args.script or []
    if args.script is not None:
        backend = "script" if args.backend in (None, "script") else backend
    if backend not in BACKENDS:
        raise UserError(f"unknown backend {backend!r}: choose one of {', '.join(BACKENDS)}")
    attempts = args.attempts if args.attempts is not None else settings.attempts
    check_attempt_options(args, attempts, len(scripts), settings.check_timeout)
    if backend == "script" and args.script is None:
        raise UserError("the script backend needs --script FILE")
    if backend == "openai" and not (args.endpoint or settings.openai_endpoint):
        raise UserError(
            "the openai backend needs --endpoint URL (or openai_endpoint in the settings)"
        )
    spec = session_spec(
        args.task,
        args.repo.expanduser(),
        settings,
        backend=backend,
        model=args.model or "",
        script=scripts[0] if scripts else None,
    )
    if backend == "llama":
        try:  # a missing model is refused before a worktree is made for it
            resolve_model_path(spec.model, settings)
        except ModelError as exc:
            raise UserError(str(exc)) from None
    workbench = headless_workbench(args, settings, spec.repo)
    if attempts != 1 or len(scripts) > 1 or args.check is not None:
        return run_attempts_command(workbench, spec, attempts, [str(s) for s in scripts], args)
    return run_session(workbench, args, lambda printer: workbench.start(spec, ask_on_tty))


def headless_workbench(args: argparse.Namespace, settings: Settings, repo: Path) -> CoreWorkbench:
    """The application core for one command: each session loads its own backend, a llama
    model's load shown on stderr; Bash commands that need approval are asked on the tty."""
    return CoreWorkbench(
        repo,
        settings,
        paths=AppPaths.default(),
        backend_factory=loading_backends(getattr(args, "quiet", False)),
    )


def loading_backends(quiet: bool) -> BackendFactory:
    """The default backends, a llama model's load shown as a percentage on stderr."""
    shown = [-1]

    def line(fraction: float) -> None:
        percent = int(fraction * 100)
        if percent != shown[0]:
            shown[0] = percent
            end = "\n" if percent >= 100 else ""
            print(f"\rloading the model: {percent:3d}%", end=end, file=sys.stderr, flush=True)

    warned: set[Path] = set()

    def factory(record: Any, settings: Any, replies_done: int = 0) -> Any:
        shown[0] = -1
        if record.backend not in ("script", "openai"):
            _warn_before_loading(resolve_model_path(record.model, settings), warned)
        return default_backend(record, settings, replies_done, progress=None if quiet else line)

    return factory


def _warn_before_loading(path: Path, warned: set[Path]) -> None:
    """The model's honest warnings on stderr, once per file, before it loads.

    Read from the light header parse (the full reader costs memory a capped run may not
    have); a file it cannot read gets no warnings here, and its load says what is wrong.
    The license notice is left to where a model is chosen.
    """
    name = parse_filename(path.name)
    if path in warned or name is None:
        return
    warned.add(path)
    try:
        header = read_gguf_header(path)
    except (ModelLoadError, OSError, ValueError):
        return
    meta = header.metadata
    code = meta.get("general.file_type")
    quant = recorded_quant(file_type_name(code if isinstance(code, int) else None, path))
    frog = is_frognano(path.name, str(meta.get("general.name", "")))
    for warning in model_warnings(name, frog, file_quant=quant):
        if warning.level != "info":
            line = f"frogdesk: {warning.level}: {warning.text} [{warning.id}]"
            print(inert_line(line), file=sys.stderr)


def run_session(
    workbench: CoreWorkbench,
    args: argparse.Namespace,
    opener: Callable[[ProgressPrinter], CoreSession],
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
    traj_path, patch_path = write_results(output.expanduser(), outcome.trajectory)
    printer.write(f"wrote {traj_path} and {patch_path}")
    if getattr(args, "apply", False) and outcome.patch:
        printer.write(workbench.apply_all(outcome.record.id, printer.write))
    if args.json:
        summary = {
            "session_id": outcome.record.id,
            "exit_reason": outcome.result.exit_reason,
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
