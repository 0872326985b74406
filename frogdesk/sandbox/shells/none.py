"""The `none` level: no isolation beyond a cleared environment, so every command is approved first."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from frogdesk.sandbox.confine import Confinement
from frogdesk.sandbox.policy import SandboxPolicy
from frogdesk.sandbox.shells.base import Launch, SandboxShell, supervisor_launch
from frogdesk.sandbox.shells.protocol import SandboxLevel


class CommandDeclined(PermissionError):
    """The user did not approve a command (or nobody was there to ask)."""


class NoneShell(SandboxShell):
    """Runs commands unconfined, each only after `approve(command)` says yes.

    Without an approve hook every command is declined: this level never runs anything
    the user has not seen. Process-tree cleanup and the cleared environment still apply.
    """

    def __init__(self, policy: SandboxPolicy, approve: Callable[[str], bool] | None = None) -> None:
        super().__init__(policy)
        self.approve = approve

    @property
    def level(self) -> SandboxLevel:
        """Always "none"."""
        return "none"

    def launch(self, command: str, cwd: Path) -> Launch:
        """Ask first; the supervisor then runs the command with no confinement."""
        if self.approve is None or not self.approve(command):
            raise CommandDeclined("the user did not approve this command")
        return supervisor_launch(command, Confinement(), self.policy.env)
