"""`frogdesk sessions`: list sessions with their status, resume one, or discard one.

Resuming and sending back go through the application core (frogdesk.core.workbench), as
in the TUI."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

from frogdesk import config
from frogdesk.commands.common import load_settings
from frogdesk.commands.errors import UserError
from frogdesk.commands.models import print_countdown, print_progress
from frogdesk.commands.operator import TerminalOperator
from frogdesk.commands.progress import ProgressPrinter
from frogdesk.commands.run import headless_workbench, run_session
from frogdesk.core.ports import HeadlessWorkbench, RunningSession
from frogdesk.core.status import status_words, stored_status
from frogdesk.inert import inert_line
from frogdesk.models.errors import ModelError
from frogdesk.models.retry import RetryPolicy


def register(sub: Any) -> None:
    """Add the subcommand parser and its list / resume / discard actions."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "sessions", help="list, resume or discard sessions"
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION")
    parser.set_defaults(
        func=lambda args: list_main(argparse.Namespace(**{**vars(args), "json": False}))
    )

    listing = actions.add_parser("list", help="show sessions, newest first")
    listing.add_argument("--json", action="store_true", help="one JSON array on stdout")
    listing.set_defaults(func=list_main)

    resume = actions.add_parser("resume", help="continue a session from its transcript")
    resume.add_argument("id", help="session id (or a unique prefix)")
    resume.add_argument("--output", type=Path, default=None, help="folder for the result files")
    resume.add_argument("--json", action="store_true", help="print a JSON summary on stdout")
    resume.add_argument("--quiet", action="store_true", help="no progress on stderr")
    resume.add_argument(
        "--model",
        default=None,
        metavar="SPEC",
        help="continue on another quant or model (its cost is announced first)",
    )
    resume.add_argument(
        "--message",
        "-m",
        default=None,
        metavar="TEXT",
        help="your next message to the model: continues a session that ended, even with a final answer",
    )
    limits = resume.add_argument_group(
        "limits", "raise (or lower) the session's budgets from here on; they are recorded"
    )
    limits.add_argument("--max-steps", type=int, default=None, help="step budget (all steps)")
    limits.add_argument("--max-context", type=int, default=None, help="context budget in tokens")
    limits.add_argument("--max-tokens-per-turn", type=int, default=None, help="cap per reply")
    limits.add_argument("--max-time", type=float, default=None, help="wall-clock budget in seconds")
    resume.set_defaults(func=resume_main)

    back = actions.add_parser(
        "send-back",
        help="after a review, revert the declined changes and let the model work on",
        description=(
            "Reverts the hunks you rejected in the session's worktree, tells the model which "
            "changes were declined or edited (and your comment), and continues the session."
        ),
    )
    back.add_argument("id", help="session id (or a unique prefix)")
    back.add_argument("--comment", default="", help="what the model should know or do next")
    back.add_argument("--output", type=Path, default=None, help="folder for the result files")
    back.add_argument("--json", action="store_true", help="print a JSON summary on stdout")
    back.add_argument("--quiet", action="store_true", help="no progress on stderr")
    back.set_defaults(func=send_back_main)

    repair = actions.add_parser(
        "repair", help="set a damaged transcript's unreadable lines aside, keep the rest"
    )
    repair.add_argument("id", help="session id")
    repair.set_defaults(func=repair_main)

    discard = actions.add_parser("discard", help="remove a session's worktree")
    discard.add_argument("id", help="session id (or a unique prefix)")
    discard.set_defaults(func=discard_main)


def _workbench(args: argparse.Namespace) -> HeadlessWorkbench:
    return headless_workbench(args, load_settings(args), Path.cwd())


def list_main(args: argparse.Namespace) -> int:
    """Print the sessions (a table, or JSON with --json)."""
    workbench = _workbench(args)
    records, damaged = workbench.stored_sessions()
    applied = {r.id: workbench.applied(r.id) for r in records}
    if args.json:
        rows = [
            {
                **dataclasses.asdict(r),
                "status": stored_status(r),
                "applied": applied[r.id].as_json(),
            }
            for r in records
        ]
        rows += [
            {"id": d.id, "status": "damaged", "file": str(d.path), "reason": d.reason}
            for d in damaged
        ]
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return 0
    if not records and not damaged:
        sys.stdout.write("no sessions\n")
        return 0
    for r in records:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.created_at))
        task = inert_line(r.task.replace("\n", " "))
        task = task if len(task) <= 50 else task[:49] + "…"
        state = applied[r.id].words()
        line = f"{r.id}  {when}  {status_words(r):<24} {r.n_steps:>4} steps  {state:<12} "
        sys.stdout.write(inert_line(line) + task + "\n")
    for d in damaged:
        sys.stdout.write(inert_line(f"{d.id}  damaged: {d.path.name}: {d.reason}") + "\n")
        sys.stdout.write(inert_line(f"  {d.way_forward()}") + "\n")
    return 0


def repair_main(args: argparse.Namespace) -> int:
    """Set the unreadable lines of a session's transcript aside so it can be resumed."""
    workbench = _workbench(args)
    moved = workbench.repair(args.id)
    if not moved:
        sys.stdout.write(f"session {args.id}: the transcript reads fine; nothing to repair\n")
        return 0
    sys.stdout.write(
        f"session {args.id}: set {moved} unreadable line(s) aside in {workbench.damaged_lines(args.id)}\n"
    )
    return 0


def resume_limits(args: argparse.Namespace) -> dict[str, Any]:
    """The limits given on the command line, checked like any other setting."""

    given = {
        "max_steps": getattr(args, "max_steps", None),
        "max_context_tokens": getattr(args, "max_context", None),
        "max_tokens_per_turn": getattr(args, "max_tokens_per_turn", None),
        "max_time": getattr(args, "max_time", None),
    }
    try:
        return config.validate({k: v for k, v in given.items() if v is not None}, "flag")
    except config.ConfigError as exc:
        raise UserError(str(exc)) from None


def pull_for_switch(spec: str, workbench: HeadlessWorkbench, printer: ProgressPrinter) -> bool:
    """Pull the Hub quant `spec` names when it is not on disk (progress on stderr, Ctrl+C
    stops and keeps the partial file); False when there is nothing to pull."""
    cancel = threading.Event()
    try:
        pulled, notes = workbench.pull_missing(
            spec,
            retry=RetryPolicy(on_wait=print_countdown),
            progress=print_progress,
            cancel=cancel,
        )
    except KeyboardInterrupt:
        cancel.set()
        raise UserError(
            "interrupted; the partial download is kept, run the same command to resume", 130
        ) from None
    for line in notes:
        printer.write(f"frogdesk: {line}")
    if pulled is None:
        return False
    printer.write(f"frogdesk: pulled {pulled.name} into the Hugging Face cache")
    return True


def resume_main(args: argparse.Namespace) -> int:
    """Continue a session where its transcript ends and write its result files again.

    The session runs with the settings it was started with, except the limits given here.
    """

    limits = resume_limits(args)
    workbench = _workbench(args)

    def opener(printer: ProgressPrinter) -> RunningSession:
        if args.message is not None:
            workbench.add_message(args.id, args.message)
        if not getattr(args, "model", None):
            session = workbench.open_session(args.id, TerminalOperator(printer), overrides=limits)
            session.prepare()
        else:
            try:
                plan = workbench.price_switch(args.model, args.id)
            except ModelError:
                if not pull_for_switch(args.model, workbench, printer):
                    raise
                plan = workbench.price_switch(args.model, args.id)
            printer.write(f"frogdesk: {plan.announcement()}")
            switched = workbench.switch_model(
                args.model, args.id, TerminalOperator(printer), overrides=limits
            )
            assert switched.session is not None  # a stored session moves with its model
            session = switched.session
            printer.write(f"switched to {plan.path.name}: re-read {switched.reread:,} tokens")
        if limits:
            shown = ", ".join(f"{k}={v:g}" for k, v in limits.items())
            printer.write(f"limits from here on: {shown}")
        return session

    return run_session(workbench, args, opener)


def send_back_main(args: argparse.Namespace) -> int:
    """Reset the worktree to the review, give the model the feedback, continue the session."""

    workbench = _workbench(args)

    def opener(printer: ProgressPrinter) -> RunningSession:
        sent, session = workbench.send_back(args.id, args.comment, TerminalOperator(printer))
        if sent.reverted:
            names = ", ".join(inert_line(path) for path in sent.reverted)
            printer.write(f"reverted in the worktree: {names}")
        printer.write("told the model:\n  " + sent.message.replace("\n", "\n  "))
        return session

    return run_session(workbench, args, opener)


def discard_main(args: argparse.Namespace) -> int:
    """Remove the session's worktree; its transcript and records stay."""
    record = _workbench(args).discard(args.id)
    sys.stdout.write(inert_line(f"discarded {record.id}") + "\n")
    return 0
