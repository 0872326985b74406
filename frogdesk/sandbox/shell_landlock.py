"""The `landlock` level: Landlock for files, seccomp for the network, no capabilities (partial)."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

from frogdesk.sandbox.confine import Confinement, readable_roots
from frogdesk.sandbox.objects import run_and_sync
from frogdesk.sandbox.policy import SandboxPolicy
from frogdesk.sandbox.process import run_process_tree
from frogdesk.sandbox.shell_none import checked_workdir, supervisor_argv
from frogdesk.sandbox.shell_types import SandboxLevel, ShellResult

PARTIAL_NOTICE = (
    "Partial sandbox (Landlock): commands cannot write outside the session worktree, open "
    "network sockets or read your credential folders, but they share your /tmp namespace, "
    "process list and Unix sockets, and the system's own files stay readable."
)


def _link_views(policy: SandboxPolicy) -> list[str]:
    """Show ignored directories as symlinks (no bind mounts here); warn where git would see them."""
    warnings: list[str] = []
    for view in policy.views:
        if os.path.lexists(view.target):
            if view.target.is_symlink() and view.target.resolve() == view.source:
                continue
            if view.target.is_dir() and not any(view.target.iterdir()):
                view.target.rmdir()
            else:
                continue
        view.target.parent.mkdir(parents=True, exist_ok=True)
        view.target.symlink_to(view.source, target_is_directory=True)
        ignored = subprocess.run(
            ["git", "check-ignore", "-q", "--", str(view.target)],
            cwd=policy.workdir_root,
            capture_output=True,
            check=False,
        )
        if ignored.returncode != 0:
            view.target.unlink()
            warnings.append(
                f"{view.target.name} cannot be shown under Landlock: git would track the link"
            )
    return warnings


class LandlockShell:
    """Confines each command with Landlock, a seccomp socket filter and an empty capability set."""

    def __init__(self, policy: SandboxPolicy, *, deny_network: bool = True) -> None:
        self.policy = policy
        self.warnings = _link_views(policy)
        write = [
            policy.workdir_root,
            *policy.git_writable,
            policy.home,
            policy.tmp,
        ]
        self.confinement = Confinement(
            read=tuple(str(p) for p in readable_roots(list(policy.masked))),
            write=tuple(str(p) for p in write),
            landlock=True,
            deny_network=deny_network,
            drop_capabilities=True,
        )

    @property
    def level(self) -> SandboxLevel:
        """Always "landlock"."""
        return "landlock"

    def run(
        self,
        command: str,
        workdir: Path,
        timeout: float,
        cancel: threading.Event | None = None,
    ) -> ShellResult:
        """Run the command confined; kill its whole process tree on timeout or cancel."""
        cwd = checked_workdir(self.policy, workdir)
        argv = supervisor_argv(command, self.confinement)
        return run_and_sync(
            self.policy.objects,
            lambda: run_process_tree(
                argv, cwd=cwd, env=self.policy.env, timeout=timeout, cancel=cancel
            ),
        )
