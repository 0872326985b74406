"""The terminal side of a headless run: progress lines, Ctrl-C to stop, the sandbox question."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from frogdesk.core.status import ending_words
from frogdesk.engine.chat import ContentDelta, ReasoningDelta
from frogdesk.inert import command_warning, inert_command, inert_line, inert_text
from frogdesk.leaf.events import (
    LoopEvent,
    Notice,
    RunFinished,
    StepStarted,
    StepUsage,
    ToolFinished,
    ToolStarted,
)

_MAIN_ARGUMENT = {
    "Read": "file_path",
    "Write": "file_path",
    "Edit": "file_path",
    "Glob": "pattern",
    "Bash": "command",
}
_ARGUMENT_CHARS = 80
_PREFILL_LINE_SECONDS = 5.0
"""Off a terminal, prefill progress is a line this often, not a line per batch."""
_PREFILL_QUIET_SECONDS = 1.0
"""A prefill shorter than this shows nothing (each step's reply line gives its tokens)."""


def main_argument(name: str, arguments: Any) -> str:
    """The argument that says what a call does (path, pattern, the command's first line), on
    one line, inert and cut to 80 characters."""
    if not isinstance(arguments, dict):
        return ""
    key = _MAIN_ARGUMENT.get(name, "")
    value = arguments.get(key) if key else None
    if value is None:
        value = next(
            (arguments[k] for k in ("file_path", "path", "pattern", "command") if k in arguments),
            "",
        )
    text = str(value).strip()
    first, _, rest = text.partition("\n")
    shown = inert_line(first)
    if rest.strip():
        shown += " …"
    return shown if len(shown) <= _ARGUMENT_CHARS else shown[: _ARGUMENT_CHARS - 1] + "…"


def tool_result(event: ToolFinished) -> str:
    """How a call ended in a few words: `ok`, `exit 1`, `stopped`, `timed out`, or its error."""
    if event.command is not None and event.ok:
        return "ok" if event.command.succeeded else event.command.describe()
    if event.ok:
        return "ok"
    first = event.observation.split("\n", 1)[0]
    return "error: " + inert_line(first[:100])


def reply_rate(event: StepUsage) -> str:
    """A step's reply: tokens, streaming rate, and the prompt it read."""
    usage = event.usage
    rate = usage.decode_rate
    shown = f"{rate:.1f} tok/s" if rate > 0 else "- tok/s"
    prompt = f"prompt {usage.evaluated_tokens:,} new of {usage.prompt_tokens:,} tokens"
    if usage.prefill_seconds > 0 and usage.evaluated_tokens:
        prompt += f" in {usage.prefill_seconds:.1f}s"
    return f"  reply: {usage.completion_tokens:,} tokens at {shown}; {prompt}"


class ProgressPrinter:
    """Turns loop events into short progress lines on a text stream (stderr).

    One line per step, one as each tool call starts and one as it ends (name, the argument
    that matters, how it ended, time), the reply's streaming rate, and the prompt's prefill
    progress where the engine reports it. `quiet` keeps notices and a failed run's line.
    """

    def __init__(
        self, stream: TextIO, quiet: bool = False, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.stream = stream
        self.quiet = quiet
        self._clock = clock
        self._prefill_shown = False
        self._prefill_started = 0.0
        self._prefill_said: float | None = None

    def __call__(self, event: LoopEvent) -> None:
        """Print one event."""
        if isinstance(event, RunFinished) and event.exit_reason != "agent":
            self._end_prefill()
            self.write(finished_line(event))
            return
        if self.quiet and not isinstance(event, Notice):
            return
        if isinstance(event, ReasoningDelta | ContentDelta):
            return
        self._end_prefill()
        if isinstance(event, StepStarted):
            self.write(f"step {event.step + 1}")
        elif isinstance(event, ToolStarted):
            self.write(
                f"  {event.call.name} {main_argument(event.call.name, event.call.arguments)}"
            )
        elif isinstance(event, ToolFinished):
            name = inert_line(event.call.name)
            argument = main_argument(event.call.name, event.call.arguments)
            self.write(f"    -> {name} {argument}: {tool_result(event)} · {event.elapsed:.1f}s")
        elif isinstance(event, StepUsage):
            self.write(reply_rate(event))
        elif isinstance(event, Notice):
            self.write(f"frogdesk: {event.level}: {event.text}")
        elif isinstance(event, RunFinished):
            self.write(finished_line(event))

    def prefill(self, done: int, total: int) -> None:
        """A prompt prefill's progress (tokens decoded of total): once it has taken a second,
        the tokens, rate and ETA, redrawn in place on a terminal, else a line every few
        seconds and at the end. (0, total) starts a prefill."""
        now = self._clock()
        if done == 0:
            self._prefill_started, self._prefill_said = now, None
        seconds = now - self._prefill_started
        if self.quiet or total <= 0 or seconds < _PREFILL_QUIET_SECONDS:
            return
        rate = done / seconds if seconds > 0 else 0.0
        eta = f", {(total - done) / rate:.0f}s left" if rate > 0 and done < total else ""
        shown = f"{rate:.0f} tok/s" if rate > 0 else "- tok/s"
        line = f"  prompt: {done:,}/{total:,} tokens, {shown}{eta}"
        if _is_terminal(self.stream):
            # ended with its own newline at the end, so another printer's next line is clean
            self.stream.write(f"\r{line}\x1b[K" + ("\n" if done >= total else ""))
            self._prefill_shown = done < total
        elif (
            done >= total
            or self._prefill_said is None
            or now - self._prefill_said >= _PREFILL_LINE_SECONDS
        ):
            self._prefill_said = now
            self.stream.write(line + "\n")
        self.stream.flush()

    def _end_prefill(self) -> None:
        if self._prefill_shown:
            self._prefill_shown = False
            self.stream.write("\n")

    def write(self, line: str) -> None:
        """One line, flushed; outside text in it (commands, paths, observations) is made inert."""
        self._end_prefill()
        self.stream.write(inert_text(line) + "\n")
        self.stream.flush()


class LoadProgress:
    """A model load's progress on a stream (stderr).

    On a terminal the percentage is redrawn in place; off one (a log, a pipe) the load is two
    lines, one as it starts and one with the seconds it took, instead of a hundred redraws.
    Either way it ends with `loaded the model in N.N s`. Make one per load.
    """

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self._clock = clock
        self._started: float | None = None
        self._percent = -1

    def __call__(self, fraction: float) -> None:
        """llama.cpp's progress, a fraction from 0 to 1."""
        now = self._clock()
        live = _is_terminal(self.stream)
        if self._started is None:
            self._started = now
            if not live:
                self.stream.write("loading the model…\n")
        percent = min(100, max(0, int(fraction * 100)))
        if percent == self._percent:
            return
        self._percent = percent
        if percent >= 100:
            done = f"loaded the model in {now - self._started:.1f} s"
            self.stream.write(f"\r{done}\x1b[K\n" if live else done + "\n")
        elif live:
            self.stream.write(f"\rloading the model: {percent:3d}%")
        self.stream.flush()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def finished_line(event: RunFinished) -> str:
    """How the run ended, in one line (its error too)."""
    tail = f" ({event.error})" if event.error else ""
    steps = "1 step" if event.n_steps == 1 else f"{event.n_steps} steps"
    return f"{ending_words(event.exit_reason)} after {steps}{tail}"


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


def approval_question(command: str) -> str:
    """The question before a command `bash_approval` holds back: the command exactly, its
    invisible parts shown.

    Each line of the command is indented on its own line; a command with control characters
    gets a warning, so a line that would have redrawn itself cannot pass for another.
    """
    shown = inert_command(command).replace("\n", "\n  ")
    warning = command_warning(command)
    return (
        f"frogdesk: run this command?\n  {shown}\n"
        + (f"frogdesk: {warning}\n" if warning else "")
        + "[y/N] "
    )


def ask_on_tty(command: str) -> bool:
    """Ask the user on the terminal before a held-back command; no terminal means no."""
    if not sys.stdin.isatty():
        return False
    sys.stderr.write(approval_question(command))
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")
