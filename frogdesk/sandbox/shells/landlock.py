"""The `landlock` level: Landlock for files, seccomp for the network, no capabilities (partial)."""

from __future__ import annotations

import os
from pathlib import Path

from frogdesk.sandbox.confine import Confinement, readable_roots
from frogdesk.sandbox.policy import SandboxPolicy
from frogdesk.sandbox.shells.base import Launch, SandboxShell, supervisor_launch
from frogdesk.sandbox.shells.protocol import SandboxLevel
from frogdesk.worktree.git import run_git

PARTIAL_NOTICE = (
    "Partial sandbox (Landlock): commands cannot write outside the session worktree, open "
    "sockets of any kind (no network, no Unix sockets: tools that need one fail), read your "
    "home (except toolchain folders) or /run, or write /dev/shm; but they share your /tmp "
    "and process list, and the system's own files stay readable."
)


def readable_paths(policy: SandboxPolicy) -> list[Path]:
    """Everything but the hidden folders and credentials, plus what the session needs in them."""
    hidden = [*policy.hidden, *(m for m in policy.masked if not _under(m, policy.toolchains))]
    paths = readable_roots(hidden)
    for folder in policy.toolchains:
        paths += readable_roots([m for m in policy.masked if m.is_relative_to(folder)], folder)
    paths += policy.git_readonly
    paths += [view.source for view in policy.views]
    return paths


def _under(path: Path, folders: tuple[Path, ...]) -> bool:
    return any(path.is_relative_to(f) for f in folders)


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
        ignored = run_git(
            policy.workdir_root, ["check-ignore", "-q", "--", str(view.target)], ok_codes=(0, 1)
        )
        if ignored.returncode != 0:
            view.target.unlink()
            warnings.append(
                f"{view.target.name} cannot be shown under Landlock: git would track the link"
            )
    return warnings


class LandlockShell(SandboxShell):
    """Confines each command with Landlock, a seccomp socket filter and an empty capability set."""

    def __init__(self, policy: SandboxPolicy, *, deny_network: bool = True) -> None:
        super().__init__(policy)
        self.warnings = _link_views(policy)
        write = [
            policy.workdir_root,
            *policy.git_writable,
            policy.home,
            policy.tmp,
        ]
        self.confinement = Confinement(
            read=tuple(str(p) for p in readable_paths(policy)),
            write=tuple(str(p) for p in write),
            landlock=True,
            deny_network=deny_network,
            drop_capabilities=True,
        )

    @property
    def level(self) -> SandboxLevel:
        """Always "landlock"."""
        return "landlock"

    def launch(self, command: str, cwd: Path) -> Launch:
        """The supervisor confines itself, then runs the command."""
        return supervisor_launch(command, self.confinement, self.policy.env)
