"""The terminal as a headless session's operator: approval asked on a tty, notices on stderr."""

from __future__ import annotations

import sys
import threading

from frogdesk.commands.progress import ProgressPrinter, ask_on_tty
from frogdesk.leaf.events import Notice

NO_TERMINAL = "approval required; rerun with --approve never or in the TUI"
"""Told once when a command needs approval and stdin is no terminal to ask on."""


class TerminalOperator:
    """Asks about held-back commands on the terminal; without one refuses them, saying why."""

    def __init__(self, printer: ProgressPrinter) -> None:
        self.printer = printer
        """Where notices and progress go: the run's progress lines on stderr."""
        self._told = False
        self._asking = threading.Lock()
        """One question on the terminal at a time (attempts run side by side)."""

    def approve(self, command: str) -> bool:
        """The user's answer on the tty; no tty: no, and the way forward said once."""
        if sys.stdin.isatty():
            with self._asking:
                return ask_on_tty(command)
        if not self._told:
            self._told = True
            self.printer(Notice(f"{NO_TERMINAL} (the command was refused)", "error"))
        return False

    def notice(self, notice: Notice) -> None:
        """Print it like the run's own notices."""
        self.printer(notice)

    def progress(self, line: str) -> None:
        """Print it as a progress line."""
        self.printer.write(line)
