"""Running N attempts at one task: N sessions side by side, then the check, then the ranking.

The CLI (`frogdesk run --attempts N`) and the TUI both call `run_attempts` and
`choose_attempt`; nothing here knows how the result is shown.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from frogdesk.attempts.errors import AttemptsError
from frogdesk.attempts.rank import pick, rank
from frogdesk.attempts.record import AttemptResult, AttemptsOutcome
from frogdesk.attempts.spec import (
    AttemptsSpec,
    validate,
)
from frogdesk.attempts.verify import CheckResult, detect_check, run_check
from frogdesk.leaf.events import LoopEvent
from frogdesk.leaf.trajectory import write_results
from frogdesk.sessions.active import ActiveSession
from frogdesk.sessions.factories import BackendFactory
from frogdesk.sessions.operator import NOBODY, Operator
from frogdesk.sessions.patch import worktree_diff
from frogdesk.sessions.service import SessionOutcome, SessionService


def plan_check(spec: AttemptsSpec) -> tuple[str, str]:
    """The check command to run and where it came from ("" and "" when there is none)."""
    found = detect_check(spec.repo)
    detected = ("", "") if found is None else (found.command, f"detected: {found.reason}")
    if spec.check is not None:
        given = spec.check.strip()
        # the TUI passes on the detected command, which is still the detected one
        if given and given == detected[0]:
            return detected
        return given, "given" if given else ""
    return detected


def attempt_seeds(base: int, n: int) -> list[int]:
    """Different seeds for the attempts: `base`, base+1, ...; a random base when `base` < 0."""
    if base < 0:
        base = random.randrange(1 << 30)
    return [base + i for i in range(n)]


AttemptEvent = Callable[[int, LoopEvent], None]
"""Receives each attempt's loop events with the attempt's index (called from its thread)."""


@dataclass
class _Running:
    index: int
    seed: int
    service: SessionService
    active: ActiveSession | None = None
    outcome: SessionOutcome | None = None
    error: str = ""
    seconds: float = 0.0


def _start(
    service: SessionService, spec: AttemptsSpec, seeds: Sequence[int], factory: BackendFactory
) -> list[_Running]:
    """Make every attempt's session one after another (git worktree creation is not parallel)."""
    running: list[_Running] = []
    for index, seed in enumerate(seeds):
        own = SessionService(
            service.paths,
            service.settings.replaced(seed=seed),
            backend_factory=factory,
            shell_factory=service.shell_factory,
            prune=False,
        )
        item = _Running(index, seed, own)
        try:
            item.active = own.start(spec.session_spec(index))
        except Exception as exc:  # one attempt that cannot start does not stop the others
            item.error = f"could not start: {exc}"
        running.append(item)
    return running


def _run_one(
    item: _Running,
    operator: Operator,
    cancel: threading.Event | None,
    on_event: AttemptEvent,
    results_root: Path | None,
) -> None:
    active = item.active
    if active is None:
        return
    started = time.monotonic()
    try:
        item.outcome = item.service.run(
            active,
            operator=operator,
            cancel=cancel,
            on_event=lambda event: on_event(item.index, event),
        )
        folder = item.service.store.session_dir(active.record.id)
        if results_root is not None:
            folder = results_root / active.record.id
        write_results(folder, item.outcome.trajectory)
    except Exception as exc:  # a crashed attempt is reported; the others run on
        item.error = f"{type(exc).__name__}: {exc}"
    finally:
        item.seconds = time.monotonic() - started
        with contextlib.suppress(Exception):
            active.close()


def _lines(patch: str) -> tuple[int, int]:
    added = removed = 0
    for line in patch.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def _result(item: _Running, check: CheckResult | None) -> AttemptResult:
    active = item.active
    if active is None:
        return AttemptResult(item.index, "", item.seed, "crashed", item.error)
    patch: str = ""
    files: tuple[str, ...] = ()
    with contextlib.suppress(Exception):  # a crashed attempt may have left no diffable state
        diff = worktree_diff(active.worktree.path, active.worktree.base_commit)
        patch, files = diff.patch, tuple(diff.files)
    added, removed = _lines(patch)
    outcome = item.outcome
    if outcome is None:
        return AttemptResult(
            item.index,
            active.record.id,
            item.seed,
            "crashed",
            item.error,
            files,
            added,
            removed,
            seconds=item.seconds,
            check=check,
        )
    result = outcome.result
    tokens = sum(u.completion_tokens for u in result.spent)
    return AttemptResult(
        item.index,
        active.record.id,
        item.seed,
        result.exit_reason,
        result.error,
        files,
        added,
        removed,
        result.n_steps,
        tokens,
        item.seconds,
        result.final_message,
        check,
        result.cut_usage,
    )


def _check(item: _Running, command: str, timeout: float, operator: Operator) -> CheckResult | None:
    active = item.active
    if not command or active is None:
        return None
    try:
        item.service.gate(active, operator).check(command)  # asked as a Bash command is
        return run_check(active.shell.shell, active.worktree.path, command, timeout)
    except Exception as exc:  # a check that cannot start counts as failed, with the reason
        return CheckResult(command, -1, f"the check could not run: {exc}", 0.0)


def run_attempts(
    service: SessionService,
    spec: AttemptsSpec,
    *,
    backend_factory: BackendFactory | None = None,
    operator: Operator = NOBODY,
    cancel: threading.Event | None = None,
    on_event: AttemptEvent | None = None,
    results_root: Path | None = None,
) -> AttemptsOutcome:
    """Run `spec.n` attempts concurrently, then the check in each worktree, and rank them.

    Every attempt is a session of its own (worktree, sandbox, transcript) with its own
    seed and the service's budgets. `backend_factory` replaces the service's one (the
    llama backend's shared batch); `operator` hears the session ids once all exist
    (`attempts: ID ...`, `-` for one that did not start) and is asked before the commands
    and checks `bash_approval` holds back.
    Each attempt's Leaf result files go to its session folder, or to
    `results_root/SESSION_ID` when given.
    """
    validate(spec)
    command, source = plan_check(spec)
    seeds = attempt_seeds(service.settings.loop.seed, spec.n)
    factory = backend_factory or service.backend_factory
    running = _start(service, spec, seeds, factory)
    ids = [item.active.record.id if item.active else "-" for item in running]
    operator.progress(f"attempts: {' '.join(ids)}")
    events: AttemptEvent = on_event or (lambda index, event: None)
    with ThreadPoolExecutor(max_workers=spec.n, thread_name_prefix="attempt") as pool:
        list(pool.map(lambda i: _run_one(i, operator, cancel, events, results_root), running))
        checks = list(pool.map(lambda i: _check(i, command, spec.check_timeout, operator), running))
    results = [_result(item, check) for item, check in zip(running, checks, strict=True)]
    ordered = rank(results) if command else results
    best = pick(ordered) if command else None
    notes: list[str] = []
    if not command:
        notes.append("no check command: the attempts are shown side by side, not ranked")
    return AttemptsOutcome(
        tuple(ordered), command, source, best.session_id if best else None, tuple(notes)
    )


def choose_attempt(
    service: SessionService, outcome: AttemptsOutcome, session_id: str, *, keep_others: bool
) -> list[str]:
    """Make `session_id` the attempt under review; discard the others unless kept.

    Returns the ids of the sessions discarded.
    """
    ids = [a.session_id for a in outcome.attempts if a.session_id]
    if session_id not in ids:
        raise AttemptsError(f"{session_id} is not one of these attempts ({', '.join(ids)})")
    discarded: list[str] = []
    if not keep_others:
        for other in ids:
            if other != session_id:
                service.discard(other)
                discarded.append(other)
    return discarded
