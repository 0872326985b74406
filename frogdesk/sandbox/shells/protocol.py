"""The Shell protocol every isolation level implements, and its result."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

SandboxLevel = Literal["bwrap", "landlock", "none"]


@dataclass(frozen=True)
class ShellResult:
    """What one command did."""

    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool = False
    cancelled: bool = False
    elapsed: float = 0.0
    limit: float = 0.0
    """The timeout the command ran under, after clamping (0 when the shell does not say)."""


class Shell(Protocol):
    """Runs `/bin/bash -lc COMMAND` in a session worktree at some isolation level."""

    @property
    def level(self) -> SandboxLevel:
        """The isolation level, shown to the user."""
        ...

    def run(
        self,
        command: str,
        workdir: Path,
        timeout: float,
        cancel: threading.Event | None = None,
    ) -> ShellResult:
        """Run the command; kill its whole process tree on timeout or cancel."""
        ...
