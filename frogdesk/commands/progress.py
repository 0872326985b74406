"""The terminal side of a headless run: progress lines, Ctrl-C to stop, the sandbox question."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any, TextIO

from frogdesk.engine.chat import ContentDelta, ReasoningDelta
from frogdesk.inert import command_warning, inert_command, inert_text
from frogdesk.leaf.events import (
    LoopEvent,
    Notice,
    RunFinished,
    StepStarted,
    ToolFinished,
    ToolStarted,
)


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
    shown = inert_command(command).replace("\n", "\n  ")
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
