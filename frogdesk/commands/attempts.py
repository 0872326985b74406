"""`frogdesk run --attempts N`: several attempts at one task, checked, ranked and chosen."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from typing import TextIO, cast

from frogdesk.attempts.errors import AttemptsError
from frogdesk.attempts.rank import RANKING
from frogdesk.attempts.record import AttemptsOutcome
from frogdesk.attempts.spec import DEFAULT_CHECK_TIMEOUT, AttemptsSpec, check_counts
from frogdesk.commands.errors import UserError
from frogdesk.commands.operator import TerminalOperator
from frogdesk.commands.progress import ProgressPrinter, stop_on_signals
from frogdesk.core.ports import HeadlessWorkbench
from frogdesk.core.status import check_source_words, ending_words
from frogdesk.inert import inert_line
from frogdesk.leaf.events import LoopEvent
from frogdesk.sessions.record import SessionSpec


def add_attempt_options(parser: argparse.ArgumentParser) -> None:
    """The options of `frogdesk run` that ask for several attempts and their check."""
    group = parser.add_argument_group("attempts")
    group.add_argument(
        "--attempts",
        type=int,
        default=None,
        metavar="N",
        help="run N attempts side by side, each in its own worktree (default: the attempts setting)",
    )
    group.add_argument(
        "--check",
        default=None,
        metavar="CMD",
        help="check command run in each attempt's sandbox (default: detected; '' for none)",
    )
    group.add_argument(
        "--check-timeout",
        type=float,
        default=None,
        metavar="S",
        help=f"seconds one check may run (default {DEFAULT_CHECK_TIMEOUT:g})",
    )
    group.add_argument(
        "--discard-others",
        action="store_true",
        help="discard the attempts that were not chosen (default: keep them)",
    )


def check_attempt_options(
    args: argparse.Namespace, n: int, scripts: int, default_timeout: float
) -> None:
    """Refuse bad attempt options in one line, before a model is looked for."""
    timeout = args.check_timeout if args.check_timeout is not None else default_timeout
    try:
        check_counts(n, scripts, timeout)
    except AttemptsError as exc:
        raise UserError(str(exc)) from None


class _Prefixed:
    """A text stream that prefixes each line with an attempt's number; one lock for all."""

    def __init__(self, stream: TextIO, prefix: str, lock: threading.Lock) -> None:
        self.stream = stream
        self.prefix = prefix
        self.lock = lock

    def write(self, text: str) -> int:
        """Write whole lines under the shared lock."""
        with self.lock:
            return self.stream.write(self.prefix + text)

    def flush(self) -> None:
        """Flush the stream."""
        self.stream.flush()


class AttemptPrinter:
    """Progress lines of every attempt on one stream, each prefixed with its number."""

    def __init__(self, stream: TextIO, quiet: bool) -> None:
        self._lock = threading.Lock()
        self._stream = stream
        self._quiet = quiet
        self._printers: dict[int, ProgressPrinter] = {}

    def __call__(self, index: int, event: LoopEvent) -> None:
        """Print one attempt's event (called from the attempt's thread)."""
        printer = self._printers.get(index)
        if printer is None:
            stream = _Prefixed(self._stream, f"[{index + 1}] ", self._lock)
            printer = self._printers.setdefault(
                index, ProgressPrinter(cast(TextIO, stream), self._quiet)
            )
        printer(event)


def describe(outcome: AttemptsOutcome) -> list[str]:
    """The attempts as text lines, best first when ranked."""
    lines: list[str] = []
    if outcome.ranked:
        lines.append(f"check: {outcome.check_command} ({check_source_words(outcome.check_source)})")
        lines.append(f"ranking: {RANKING}")
    else:
        lines.extend(outcome.notes)
    for place, attempt in enumerate(outcome.attempts, start=1):
        check = attempt.check
        verdict = "no check"
        if check is not None:
            verdict = "passed" if check.passed else f"failed ({check.exit_code})"
            verdict += f" in {check.seconds:.1f}s: {check.summary}"
        label = f"#{place}" if outcome.ranked else f"attempt {attempt.index + 1}"
        lines.append(
            f"{label} {attempt.session_id or '-'} seed {attempt.seed}: "
            f"{ending_words(attempt.exit_reason)}, "
            f"{len(attempt.files_changed)} files +{attempt.lines_added}/-{attempt.lines_removed}, "
            f"{attempt.n_steps} steps, {attempt.tokens} tokens, {attempt.seconds:.1f}s; {verdict}"
        )
        if attempt.error:
            lines.append(f"    error: {inert_line(attempt.error)}")
    if outcome.chosen:
        lines.append(
            f"chosen: {outcome.chosen} (review it with `frogdesk review {outcome.chosen}`)"
        )
    elif outcome.ranked:
        lines.append("chosen: none (no attempt passed the check)")
    return lines


def run_attempts_command(
    workbench: HeadlessWorkbench,
    spec: SessionSpec,
    n: int,
    scripts: list[str],
    args: argparse.Namespace,
) -> int:
    """Run the attempts, print them, apply or discard as asked.

    Exit 0 when an attempt was chosen (its check passed), or, without a check, when at
    least one attempt ended with a final answer; 1 otherwise.
    """
    timeout = (
        args.check_timeout
        if args.check_timeout is not None
        else workbench.settings.loop.check_timeout
    )
    attempts = AttemptsSpec(
        task=spec.task,
        repo=spec.repo,
        n=n,
        backend=spec.backend,
        model=spec.model,
        endpoint=spec.endpoint,
        scripts=tuple(scripts),
        check=args.check,
        check_timeout=timeout,
    )
    printer = ProgressPrinter(sys.stderr, getattr(args, "quiet", False))
    output: Path | None = args.output.expanduser() if args.output else None
    try:
        with stop_on_signals(printer) as cancel:
            outcome = workbench.start_attempts(
                attempts,
                TerminalOperator(printer),
                cancel,
                AttemptPrinter(sys.stderr, getattr(args, "quiet", False)),
                results_root=output,
            )
        if outcome.chosen and args.discard_others:
            _, discarded = workbench.choose_attempt(outcome, outcome.chosen, keep_others=False)
            for gone in discarded:
                printer.write(f"discarded {gone}")
        if outcome.chosen and args.apply:
            printer.write(workbench.apply_all(outcome.chosen, printer.write))
    except AttemptsError as exc:
        raise UserError(str(exc)) from None
    if args.json:
        sys.stdout.write(json.dumps(outcome.to_json()) + "\n")
    else:
        sys.stdout.write("".join(inert_line(line) + "\n" for line in describe(outcome)))
    if outcome.ranked:
        return 0 if outcome.chosen else 1
    return 0 if any(a.exit_reason == "agent" for a in outcome.attempts) else 1
