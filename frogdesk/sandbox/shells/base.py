"""The part every shell shares: check the folder, start the command, kill its tree, sync objects."""

from __future__ import annotations

import json
import math
import os
import sys
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from pathlib import Path

import frogdesk
from frogdesk.sandbox.confine import Confinement
from frogdesk.sandbox.errors import SandboxError
from frogdesk.sandbox.limits import run_limited
from frogdesk.sandbox.policy import SandboxPolicy
from frogdesk.sandbox.process import run_process_tree
from frogdesk.sandbox.shells.protocol import SandboxLevel, ShellResult
from frogdesk.sandbox.synced import run_and_sync
from frogdesk.sandbox.toolchain import after_profile


@dataclass(frozen=True)
class Launch:
    """How one command is started: its argv, environment, and file descriptors it inherits."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...] = ()
    """Opened for this command only; closed once it has run."""
    supervised: bool = False
    """argv is FrogDesk's supervisor: asked to end (SIGTERM), never killed first."""


# The supervisor is imported from the very package running now (-I ignores PYTHONPATH,
# which would otherwise be how a checkout under test is found).
_SUPERVISOR = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from frogdesk.sandbox.supervisor import main; sys.exit(main(sys.argv[2:]))"
)


def data_fd(name: str, data: bytes) -> int:
    """A file descriptor that reads `data` from its start, for a child to inherit."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def supervisor_launch(
    command: str, confinement: Confinement, env: dict[str, str], *, use_cgroup: bool = True
) -> Launch:
    """How to run `/bin/bash -lc COMMAND` under FrogDesk's supervisor (env's PATH and
    virtualenv set again after the login profile).

    The configuration goes on an inherited file descriptor, not the command line: the
    paths a Landlock ruleset lists beside a hidden folder can be thousands (a busy /tmp),
    past what one argument may hold (128 KiB on Linux).
    """
    config = {
        "argv": ["/bin/bash", "-lc", after_profile(command, env)],
        "confinement": confinement.to_json(),
        "parent": os.getpid(),
        "cgroup": use_cgroup,
    }
    fd = data_fd("frogdesk-supervisor", json.dumps(config).encode())
    package_root = str(Path(frogdesk.__file__).resolve().parent.parent)
    argv = [sys.executable, "-I", "-c", _SUPERVISOR, package_root, "--config-fd", str(fd)]
    return Launch(argv, env, pass_fds=(fd,), supervised=True)


def checked_workdir(policy: SandboxPolicy, workdir: Path) -> Path:
    """workdir, resolved, if it is inside the session's worktree; SandboxError otherwise."""
    resolved = Path(workdir).resolve()
    root = policy.workdir_root.resolve()
    if resolved != root and not resolved.is_relative_to(root):
        raise SandboxError(f"{workdir} is outside the session worktree {root}")
    return resolved


class SandboxShell(ABC):
    """Runs `/bin/bash -lc COMMAND` under a policy; each level says only how to launch it."""

    def __init__(self, policy: SandboxPolicy) -> None:
        self.policy = policy

    @property
    @abstractmethod
    def level(self) -> SandboxLevel:
        """The isolation level, shown to the user."""

    @abstractmethod
    def launch(self, command: str, cwd: Path) -> Launch:
        """The process that runs command confined at this level, in cwd."""

    def run(
        self,
        command: str,
        workdir: Path,
        timeout: float,
        cancel: threading.Event | None = None,
    ) -> ShellResult:
        """Run the command confined; kill its whole process tree on timeout or cancel.

        The timeout is clamped to the policy's maximum; a non-finite one is refused.
        """
        if not math.isfinite(timeout):
            raise ValueError(f"timeout must be a finite number of seconds, not {timeout}")
        timeout = min(timeout, self.policy.max_timeout)
        cwd = checked_workdir(self.policy, workdir)
        launch = self.launch(command, cwd)
        try:
            result = run_and_sync(
                self.policy.objects,
                lambda: run_limited(
                    self.policy.limits,
                    self.policy.writable_roots(),
                    self.policy.home.parent,
                    launch.argv,
                    cancel,
                    lambda argv, stop: run_process_tree(
                        argv,
                        cwd=cwd,
                        env=launch.env,
                        timeout=timeout,
                        cancel=stop,
                        pass_fds=launch.pass_fds,
                        supervised=launch.supervised,
                    ),
                    supervised=launch.supervised,
                ),
            )
        finally:
            for fd in launch.pass_fds:
                os.close(fd)
        return replace(result, limit=timeout)
