"""The operator: how a session asks and tells its user, given once when the session opens."""

from __future__ import annotations

from typing import Protocol

from frogdesk.leaf.events import Notice


class Operator(Protocol):
    """The user at a face (the TUI's screen, the CLI's terminal), as a session reaches them.

    Both methods are called from the thread that runs the session, never the UI thread.
    """

    def approve(self, command: str) -> bool:
        """Ask whether a Bash command may run (blocking until answered); True lets it run."""
        ...

    def notice(self, notice: Notice) -> None:
        """Tell the user something FrogDesk noticed (never shown to the model)."""
        ...

    def progress(self, line: str) -> None:
        """Tell the user what a long operation is doing (the plan of N attempts, ...)."""
        ...


class Nobody:
    """No user to ask: every command that needs approval is refused, notices are dropped."""

    def approve(self, command: str) -> bool:
        """Refuse: nobody saw the command."""
        return False

    def notice(self, notice: Notice) -> None:
        """Drop it: nobody is there to read it."""

    def progress(self, line: str) -> None:
        """Drop it: nobody is there to read it."""


NOBODY = Nobody()
"""The operator of a session run with no user at hand (tests, benchmarks, scripts)."""
