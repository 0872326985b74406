"""A plain unconfined Shell for tests: /bin/bash -lc through the sandbox's process-tree runner."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import weakref
from pathlib import Path

from frogdesk.sandbox.process import run_process_tree
from frogdesk.sandbox.shells.protocol import SandboxLevel, ShellResult


class PlainShell:
    """Runs commands unconfined; what the tool runner and loop tests drive Bash through."""

    def __init__(self) -> None:
        self.commands: list[str] = []
        # A clean HOME: a login shell must not run this machine's dotfiles (pyenv's rehash
        # lock, left behind by a killed shell, would stall every later test).
        self.home = Path(tempfile.mkdtemp(prefix="frogdesk-plain-home-"))
        weakref.finalize(self, shutil.rmtree, self.home, True)  # gone with the shell

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
            env={**os.environ, "HOME": str(self.home)},
            timeout=timeout,
            cancel=cancel,
        )
