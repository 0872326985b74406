"""A plain unconfined Shell for tests: /bin/bash -lc through the sandbox's process-tree runner."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from frogdesk.sandbox.process import run_process_tree
from frogdesk.sandbox.shell_types import SandboxLevel, ShellResult


class PlainShell:
    """Runs commands unconfined; what the tool runner and loop tests drive Bash through."""

    def __init__(self) -> None:
        self.commands: list[str] = []

    @property
    def level(self) -> SandboxLevel:
        return "none"

    def run(
        self, command: str, workdir: Path, timeout: float, cancel: threading.Event | None = None
    ) -> ShellResult:
        self.commands.append(command)
        return run_process_tree(
            ["/bin/bash", "-lc", command],
            cwd=workdir,
            env=dict(os.environ),
            timeout=timeout,
            cancel=cancel,
        )
