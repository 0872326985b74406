"""The `none` level: no isolation beyond a cleared environment (approval is asked where Bash runs)."""

from __future__ import annotations

from pathlib import Path

from frogdesk.sandbox.confine import Confinement
from frogdesk.sandbox.shells.base import Launch, SandboxShell, supervisor_launch
from frogdesk.sandbox.shells.protocol import SandboxLevel


class NoneShell(SandboxShell):
    """Runs commands unconfined: process-tree cleanup and the cleared environment still apply.

    Whether a command may run at all is the Bash tool's approval gate (leaf.approval), the
    same at every level; at this level its default asks before every command.
    """

    @property
    def level(self) -> SandboxLevel:
        """Always "none"."""
        return "none"

    def launch(self, command: str, cwd: Path) -> Launch:
        """The supervisor runs the command with no confinement."""
        return supervisor_launch(command, Confinement(), self.policy.env)
