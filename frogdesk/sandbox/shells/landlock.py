"""The `landlock` level: Landlock for files, seccomp for the network, no capabilities (partial)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from frogdesk.beneath import fd_path, makedirs_beneath, open_root, split_parent
from frogdesk.sandbox.confine import Confinement, readable_roots
from frogdesk.sandbox.policy import SandboxPolicy
from frogdesk.sandbox.shells.base import Launch, SandboxShell, supervisor_launch
from frogdesk.sandbox.shells.protocol import SandboxLevel
from frogdesk.sandbox.toolchain import is_venv
from frogdesk.worktree.git import run_git

PARTIAL_NOTICE = (
    "Partial sandbox (Landlock): commands cannot write outside the session worktree, open "
    "sockets of any kind (no network, no Unix sockets: tools that need one fail), read your "
    "home (except toolchain folders), FrogDesk's own folders or /run, or write /dev/shm; "
    "but they share your /tmp and process list, and the system's own files stay readable."
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
    """Show ignored directories as symlinks (no bind mounts here); warn where git would see them.

    The worktree is the sandbox's: every step is taken beneath it through no link, on
    descriptors (a `frontend` it replaced with a link must not lead this code elsewhere).
    A link the sandbox put in a view's place is left alone: like any file of its worktree
    it can replace ours, but what a link names is still only what Landlock lets the command
    read, and the user's folder stays read-only whatever the link says (no write rule
    covers it). Where no link can be shown, the shell still finds the folder's tools
    through PATH and VIRTUAL_ENV, which name the user's folder itself.
    """
    warnings: list[str] = []
    root = open_root(policy.workdir_root)
    try:
        for view in policy.views:
            rel = view.target.relative_to(policy.workdir_root).as_posix()
            try:
                parent_rel, name = split_parent(rel)
                parent = makedirs_beneath(root, parent_rel) if parent_rel else os.dup(root)
            except OSError:
                continue  # a link or a file where a folder should be: nothing shown there
            try:
                warning = _link_one(policy, parent, name, view.source)
            finally:
                os.close(parent)
            if warning:
                warnings.append(warning)
    finally:
        os.close(root)
    return warnings


def _link_one(policy: SandboxPolicy, parent: int, name: str, source: Path) -> str | None:
    """Put the link `name` -> source in the folder `parent`; a warning where git would track it."""
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        st = None
    if st is not None:
        if not stat.S_ISDIR(st.st_mode):
            return None  # ours from an earlier start, or the session's own file or link
        try:
            os.rmdir(name, dir_fd=parent)  # an empty folder only (bwrap leaves one behind)
        except OSError:
            return None  # the session's own files are there
    os.symlink(str(source), name, target_is_directory=True, dir_fd=parent)
    where = Path(fd_path(parent)) / name
    ignored = run_git(
        policy.workdir_root, ["check-ignore", "-q", "--", str(where)], ok_codes=(0, 1)
    )
    if ignored.returncode != 0:
        os.unlink(name, dir_fd=parent)
        found = " (its tools are still found through PATH)" if is_venv(source) else ""
        return f"{name} cannot be shown under Landlock: git would track the link{found}"
    return None


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
