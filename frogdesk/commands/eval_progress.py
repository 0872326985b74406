"""`frogdesk eval`'s progress on stderr (a bar redrawn in place on a terminal, a line per
finished task elsewhere) and the exact command that resumes a stopped run."""

from __future__ import annotations

import argparse
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from frogdesk.commands.progress import ProgressPrinter
from frogdesk.inert import inert_line, inert_text

_CLEAR = "\r\x1b[K"


def clock_text(seconds: float) -> str:
    """Seconds as "45s", "3m05s" or "1h02m"."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


@dataclass
class EvalMeter:
    """Where a whole `frogdesk eval` stands (every model's tasks together) and its ETA from the
    measured rate: the mean wall time of the tasks finished so far in this command."""

    total: int
    """Tasks to run in this command, all models together."""
    attempts: int
    clock: Callable[[], float] = time.monotonic
    done: int = 0
    seconds: list[float] = field(default_factory=list)
    model: str = ""
    task: str = ""
    attempt: int = 1
    started: float = 0.0

    def start(self, model: str, task: str) -> None:
        """A task begins."""
        self.model, self.task, self.attempt = model, task, 1
        self.started = self.clock()

    def finish(self, seconds: float) -> None:
        """The current task ended after `seconds`."""
        self.done += 1
        self.seconds.append(seconds)

    def eta(self) -> float | None:
        """Seconds left at the measured rate; None before any task has finished."""
        if not self.seconds:
            return None
        mean = sum(self.seconds) / len(self.seconds)
        running = self.clock() - self.started if self.task else 0.0
        left = (self.total - self.done) * mean - min(running, mean)
        return max(0.0, left)

    def line(self) -> str:
        """The bar: tasks done of all, the model, the task and its attempt, the ETA."""
        eta = self.eta()
        width = 20
        filled = width * self.done // self.total if self.total else width
        bar = "#" * filled + "-" * (width - filled)
        shown = f"ETA {clock_text(eta)}" if eta is not None else "ETA -"
        return (
            f"[{bar}] {self.done}/{self.total}  {self.model}: {self.task} "
            f"attempt {self.attempt}/{self.attempts}  {shown}"
        )


class EvalPrinter(ProgressPrinter):
    """The run's printer: on a terminal the meter's bar stays on the last line, cleared before
    each other line and drawn again after it; off a terminal no bar at all."""

    def __init__(self, stream: TextIO, quiet: bool = False) -> None:
        super().__init__(stream, quiet)
        self.meter: EvalMeter | None = None
        self._bar_shown = False
        self.terminal = _is_terminal(stream)

    def write(self, line: str) -> None:
        """One line above the bar."""
        self._clear_bar()
        super().write(line)
        self.draw()

    def draw(self) -> None:
        """Redraw the bar in place (terminal only, not quiet, once a task has started)."""
        if self.quiet or not self.terminal or self.meter is None or not self.meter.task:
            return
        self.stream.write(_CLEAR + inert_line(self.meter.line()))
        self.stream.flush()
        self._bar_shown = True

    def end_bar(self) -> None:
        """Take the bar off the screen for good (the run is over)."""
        self._clear_bar()
        if self.meter is not None:
            self.meter.task = ""

    def _clear_bar(self) -> None:
        if self._bar_shown:
            self._bar_shown = False
            self.stream.write(_CLEAR)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


_FLAGS = (
    ("backend", "--backend"),
    ("endpoint", "--endpoint"),
    ("max_steps", "--max-steps"),
    ("max_time", "--max-time"),
    ("temperature", "--temperature"),
    ("seed", "--seed"),
    ("sandbox", "--sandbox"),
    ("check", "--check"),
    ("timeout", "--timeout"),
)
"""The run's valued flags, as they are given again to resume it."""


def resume_command(
    args: argparse.Namespace, models: Sequence[str], model_flag: str, resume: str
) -> str:
    """The exact `frogdesk eval` that continues a stopped run: the same suite and flags, the
    models not finished yet (`model_flag` each), and `--resume` for the one that was cut."""
    words = ["frogdesk"]
    if getattr(args, "config", None) is not None:
        words += ["--config", str(args.config)]
    words += ["eval", str(args.suite)]
    for dest, flag in _FLAGS:
        value = getattr(args, dest, None)
        if value is not None and value != "":
            words += [flag, str(value)]
    if args.attempts != 1:
        words += ["--attempts", str(args.attempts)]
    for pattern in args.tasks or []:
        words += ["--tasks", pattern]
    for model in models:
        words += [model_flag, model]
    if getattr(args, "no_precheck", False):
        words.append("--no-precheck")
    for switch in ("json", "quiet"):
        if getattr(args, switch, False):
            words.append(f"--{switch}")
    words += ["--resume", resume]
    return inert_text(shlex.join(words))
