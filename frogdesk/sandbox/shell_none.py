"""The `none` level: no isolation beyond a cleared environment, so every command is approved first."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from frogdesk.sandbox.confine import Confinement
from frogdesk.sandbox.errors import SandboxError
from frogdesk.sandbox.objects import run_and_sync
from frogdesk.sandbox.policy import SandboxPolicy
from frogdesk.sandbox.process import run_process_tree
from frogdesk.sandbox.shell_types import SandboxLevel, ShellResult


class CommandDeclined(PermissionError):
    """The user did not approve a command (or nobody was there to ask)."""


def supervisor_argv(command: str, confinement: Confinement) -> list[str]:
    """The command line that runs `/bin/bash -lc COMMAND` under FrogDesk's supervisor."""
    config = {"argv": ["/bin/bash", "-lc", command], "confinement": confinement.to_json()}
    return [sys.executable, "-I", "-m", "frogdesk.sandbox.supervisor", json.dumps(config)]


def checked_workdir(policy: SandboxPolicy, workdir: Path) -> Path:
    """workdir, resolved, if it is inside the session's worktree; SandboxError otherwise."""
    resolved = Path(workdir).resolve()
    root = policy.workdir_root.resolve()
    if resolved != root and not resolved.is_relative_to(root):
        raise SandboxError(f"{workdir} is outside the session worktree {root}")
    return resolved


class NoneShell:
    """Runs commands unconfined, each only after `approve(command)` says yes.

    Without an approve hook every command is declined: this level never runs anything
    the user has not seen. Process-tree cleanup and the cleared environment still apply.
    """

    def __init__(self, policy: SandboxPolicy, approve: Callable[[str], bool] | None = None) -> None:
        self.policy = policy
        self.approve = approve

    @property
    def level(self) -> SandboxLevel:
        """Always "none"."""
        return "none"

    def run(
        self,
        command: str,
        workdir: Path,
        timeout: float,
        cancel: threading.Event | None = None,
    ) -> ShellResult:
        """Ask, then run the command with its whole process tree killed on timeout or cancel."""
        cwd = checked_workdir(self.policy, workdir)
        if self.approve is None or not self.approve(command):
            raise CommandDeclined("the user did not approve this command")
        argv = supervisor_argv(command, Confinement())
        return run_and_sync(
            self.policy.objects,
            lambda: run_process_tree(
                argv, cwd=cwd, env=self.policy.env, timeout=timeout, cancel=cancel
            ),
        )
