"""`frogdesk run`: one whole session headless in its own worktree, with Leaf's result files."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from frogdesk.commands.attempts import (
    add_attempt_options,
    check_attempt_options,
    run_attempts_command,
)
from frogdesk.commands.common import UserError, load_settings
from frogdesk.engine.types import ContentDelta, ReasoningDelta
from frogdesk.inert import command_warning, inert_text
from frogdesk.leaf.events import (
    LoopEvent,
    Notice,
    RunFinished,
    StepStarted,
    ToolFinished,
    ToolStarted,
)
from frogdesk.leaf.records import recovery_counts
from frogdesk.leaf.trajectory import write_results
from frogdesk.paths import AppPaths

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


class ProgressPrinter:
    """Turns loop events into short progress lines on a text stream (stderr)."""

    def __init__(self, stream: TextIO, quiet: bool = False) -> None:
        self.stream = stream
        self.quiet = quiet
        self._streaming = False

    def __call__(self, event: LoopEvent) -> None:
        """Print one event."""
        if self.quiet and not isinstance(event, Notice):
            return
        if isinstance(event, ReasoningDelta | ContentDelta):
            return
        if isinstance(event, StepStarted):
            self.write(f"step {event.step + 1}")
        elif isinstance(event, ToolStarted):
            self.write(f"  {event.call.name} {_short_args(event.call.arguments)}")
        elif isinstance(event, ToolFinished):
            first = event.observation.split("\n", 1)[0][:100]
            self.write(f"    -> {first}")
        elif isinstance(event, Notice):
            self.write(f"frogdesk: {event.level}: {event.text}")
        elif isinstance(event, RunFinished):
            tail = f" ({event.error})" if event.error else ""
            self.write(f"finished: {event.exit_reason} after {event.n_steps} steps{tail}")

    def write(self, line: str) -> None:
        """One line, flushed; outside text in it (commands, paths, observations) is made inert."""
        self.stream.write(inert_text(line) + "\n")
        self.stream.flush()


@contextlib.contextmanager
def stop_on_signals(printer: ProgressPrinter) -> Iterator[threading.Event]:
    """Ctrl-C or SIGTERM ends the run cleanly (`cancelled`, results written); a second Ctrl-C aborts."""
    cancel = threading.Event()

    def on_signal(signum: int, frame: types.FrameType | None) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        printer.write("frogdesk: stopping after the current step (Ctrl-C again to abort)")

    if threading.current_thread() is not threading.main_thread():
        yield cancel
        return
    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield cancel
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _short_args(arguments: Any) -> str:
    if not isinstance(arguments, dict):
        return ""
    for key in ("file_path", "path", "pattern", "command"):
        if key in arguments:
            return str(arguments[key]).replace("\n", " ")[:80]
    return ""


def approval_question(command: str) -> str:
    """The question before an unsandboxed command: the command exactly, its invisible parts shown.

    Each line of the command is indented on its own line; a command with control characters
    gets a warning, so a line that would have redrawn itself cannot pass for another.
    """
    shown = inert_text(command, keep_tabs=False).replace("\n", "\n  ")
    warning = command_warning(command)
    return (
        f"frogdesk: run without a sandbox?\n  {shown}\n"
        + (f"frogdesk: {warning}\n" if warning else "")
        + "[y/N] "
    )


def ask_on_tty(command: str) -> bool:
    """Ask the user on the terminal before an unsandboxed command; no terminal means no."""
    if not sys.stdin.isatty():
        return False
    sys.stderr.write(approval_question(command))
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


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
    from frogdesk.sessions.active import SessionSpec
    from frogdesk.sessions.runner import SessionService

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
    spec = SessionSpec(
        task=args.task,
        repo=args.repo.expanduser(),
        backend=backend,
        model=args.model or (settings.openai_model if backend == "openai" else settings.model),
        endpoint=args.endpoint or settings.openai_endpoint,
        script=str(scripts[0]) if scripts else "",
    )
    if backend == "llama":
        from frogdesk.models.errors import ModelError
        from frogdesk.sessions.parts import resolve_model_path

        try:  # a missing model is refused before a worktree is made for it
            resolve_model_path(spec.model, settings)
        except ModelError as exc:
            raise UserError(str(exc)) from None
    service = SessionService(
        AppPaths.default(),
        settings,
        approve=ask_on_tty,
        backend_factory=loading_backends(getattr(args, "quiet", False)),
    )
    if attempts != 1 or len(scripts) > 1 or args.check is not None:
        return run_attempts_command(service, spec, attempts, [str(s) for s in scripts], args)
    return run_session(service, spec=spec, resume_id=None, args=args)


def loading_backends(quiet: bool) -> Any:
    """The default backends, a llama model's load shown as a percentage on stderr."""
    from frogdesk.sessions.parts import default_backend

    shown = [-1]

    def line(fraction: float) -> None:
        percent = int(fraction * 100)
        if percent != shown[0]:
            shown[0] = percent
            end = "\n" if percent >= 100 else ""
            print(f"\rloading the model: {percent:3d}%", end=end, file=sys.stderr, flush=True)

    def factory(record: Any, settings: Any, replies_done: int = 0) -> Any:
        shown[0] = -1
        return default_backend(record, settings, replies_done, progress=None if quiet else line)

    return factory


def run_session(
    service: Any,
    *,
    spec: Any,
    resume_id: str | None,
    args: argparse.Namespace,
    opener: Callable[[ProgressPrinter], Any] | None = None,
) -> int:
    """Start (or resume) a session, run it, write the results; shared with `sessions resume`.

    `opener`, when given, makes the ActiveSession instead (send-back, model switch); it may
    tell the user what it does through the printer.
    """
    from frogdesk.core.reviewing import apply_all

    printer = ProgressPrinter(sys.stderr, getattr(args, "quiet", False))
    if opener is not None:
        active = opener(printer)
    else:
        active = service.open(resume_id) if resume_id else service.start(spec)
    try:
        printer.write(f"session {active.record.id} in {active.worktree.path}")
        printer.write(f"sandbox: {active.shell.level} ({active.shell.reason})")
        for warning in active.shell.warnings:
            printer(Notice(warning, "warning"))
        with stop_on_signals(printer) as cancel:
            outcome = service.run(active, cancel=cancel, on_event=printer)
    finally:
        active.close()
    output: Path = args.output or service.store.session_dir(outcome.record.id)
    traj_path, patch_path = write_results(output.expanduser(), outcome.trajectory)
    printer.write(f"wrote {traj_path} and {patch_path}")
    if getattr(args, "apply", False) and outcome.patch:
        printer.write(apply_all(service.store, outcome.record.id))
    if args.json:
        summary = {
            "session_id": outcome.record.id,
            "exit_reason": outcome.result.exit_reason,
            "n_steps": outcome.result.n_steps,
            "output_dir": str(output.expanduser().resolve()),
            "files_changed": outcome.files_changed,
            "recoveries": recovery_counts(outcome.result.steps),
        }
        sys.stdout.write(json.dumps(summary) + "\n")
    elif outcome.result.final_message:
        sys.stdout.write(inert_text(outcome.result.final_message) + "\n")
    return 0 if outcome.result.exit_reason == "agent" else 1
