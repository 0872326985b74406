"""Kernel confinement a process applies to itself: capabilities, Landlock, a seccomp net filter."""

from __future__ import annotations

import ctypes
import errno
import os
import socket
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyseccomp

PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
# Device files a command may use; the rest of /dev (disks, memory) stays out of reach.
DEVICES_READ = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
# Not /dev/shm (it would persist on the host), not /dev/pts (the user's own terminals).
DEVICES_WRITE = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")
FAMILY_LIMIT = 64
"""socket() families are below this (the kernel refuses the rest); each other one is denied."""
NETWORK_FAMILIES = (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6)
"""What the bwrap level allows: its network namespace holds only its own loopback."""
SOCK_TYPE_MASK = 0xF
SOCK_PACKET = 10
LOW_32_BITS = 0xFFFFFFFF


@dataclass(frozen=True)
class Confinement:
    """What a supervisor applies to itself before starting the command (all inherited)."""

    read: tuple[str, ...] = ()
    """Paths readable and executable (with everything below them)."""
    write: tuple[str, ...] = ()
    """Paths fully writable."""
    landlock: bool = False
    deny_network: bool = False
    """No socket() of any family (socketpair() stays), no io_uring."""
    drop_capabilities: bool = False

    def to_json(self) -> dict[str, object]:
        """A JSON-ready form, to pass to the supervisor process."""
        return {
            "read": list(self.read),
            "write": list(self.write),
            "landlock": self.landlock,
            "deny_network": self.deny_network,
            "drop_capabilities": self.drop_capabilities,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Confinement:
        """The inverse of to_json."""
        read = data.get("read", [])
        write = data.get("write", [])
        assert isinstance(read, list) and isinstance(write, list)
        return cls(
            read=tuple(str(p) for p in read),
            write=tuple(str(p) for p in write),
            landlock=bool(data.get("landlock")),
            deny_network=bool(data.get("deny_network")),
            drop_capabilities=bool(data.get("drop_capabilities")),
        )


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def prctl(option: int, arg: int) -> None:
    """prctl(2) with one argument; OSError on failure."""
    if _libc().prctl(option, ctypes.c_ulong(arg), 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def become_subreaper(parent_death_signal: int) -> None:
    """Adopt orphaned descendants, and get a signal if our parent dies."""
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_PDEATHSIG, parent_death_signal)


def drop_capabilities() -> None:
    """Empty the capability bounding set so nothing exec'd from here gets capabilities, even as root."""
    try:
        last = int(Path("/proc/sys/kernel/cap_last_cap").read_text().strip())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):
        try:
            prctl(PR_CAPBSET_DROP, cap)
        except OSError as exc:
            if exc.errno not in (errno.EINVAL, errno.EPERM):
                raise


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing or disabled."""
    try:
        import landlockpy
    except ImportError:
        return 0
    try:
        return int(landlockpy.abi_version())
    except OSError:
        return 0


def apply_landlock(read: Iterable[str], write: Iterable[str]) -> None:
    """Restrict this process and its future children to the given paths (and no TCP)."""
    from landlockpy import AccessFS, AccessNet, Ruleset, Scope

    file_only = (
        AccessFS.EXECUTE
        | AccessFS.WRITE_FILE
        | AccessFS.READ_FILE
        | AccessFS.TRUNCATE
        | AccessFS.IOCTL_DEV
    )
    with Ruleset(
        handled_net=AccessNet.BIND_TCP
        | AccessNet.CONNECT_TCP
        | AccessNet.BIND_UDP
        | AccessNet.CONNECT_SEND_UDP,
        scoped=Scope.SIGNAL | Scope.ABSTRACT_UNIX_SOCKET,
    ) as ruleset:
        everything = ruleset.handled_fs
        reading = AccessFS.READ_FILE | AccessFS.READ_DIR | AccessFS.EXECUTE

        def allow(path: str, rights: AccessFS) -> None:
            if not os.path.exists(path):
                return
            # A rule on a file may only carry file rights; the kernel refuses the rest.
            ruleset.allow_path(path, rights if os.path.isdir(path) else rights & file_only)

        for path in read:
            allow(path, reading)
        for dev in DEVICES_READ:
            allow(dev, AccessFS.READ_FILE | AccessFS.IOCTL_DEV)
        for dev in DEVICES_WRITE:
            allow(dev, everything & ~AccessFS.EXECUTE)
        for path in write:
            allow(path, everything)
        ruleset.restrict()


def socket_filter(allowed: Collection[int] = ()) -> pyseccomp.SyscallFilter:
    """A seccomp filter: socket() only for the allowed families, never raw; no io_uring.

    The kernel reads socket()'s domain as a 32-bit int, so only its low 32 bits are
    compared: 0x100000002 is AF_INET to the kernel and must be refused as AF_INET.
    socketpair() stays allowed (it cannot reach anything outside).
    """
    import pyseccomp

    refuse = pyseccomp.ERRNO(errno.EACCES)
    flt = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    for family in range(FAMILY_LIMIT):
        if family not in allowed:
            flt.add_rule(
                refuse, "socket", pyseccomp.Arg(0, pyseccomp.MASKED_EQ, LOW_32_BITS, family)
            )
    for kind in (socket.SOCK_RAW, SOCK_PACKET):
        flt.add_rule(refuse, "socket", pyseccomp.Arg(1, pyseccomp.MASKED_EQ, SOCK_TYPE_MASK, kind))
    flt.add_rule(pyseccomp.ERRNO(errno.ENOSYS), "io_uring_setup")
    return flt


def readable_roots(hidden: Sequence[Path], top: Path = Path("/")) -> list[Path]:
    """Paths that together cover everything under top except the hidden ones (and /dev)."""
    roots: set[Path] = {top}
    for secret in [*hidden, Path("/dev")]:
        for root in list(roots):
            if secret == root:
                roots.discard(root)
            elif secret.is_relative_to(root):
                roots.discard(root)
                current = root
                for part in secret.relative_to(root).parts:
                    step = current / part
                    try:
                        entries = [Path(e.path) for e in os.scandir(current)]
                    except OSError:
                        entries = []
                    # A rule made on a link is a rule on what it names: a link beside a
                    # hidden folder (linked-home -> home) would hand the folder back. The
                    # link is left out; whatever it names outside the hidden folders is
                    # readable through its own root.
                    roots.update(e for e in entries if e != step and not e.is_symlink())
                    current = step
    return sorted(roots)


def apply(confinement: Confinement) -> None:
    """Apply everything the confinement asks for, in an order that keeps each step possible."""
    # Built before Landlock: its module may live in a folder the ruleset hides.
    sockets = socket_filter() if confinement.deny_network else None
    if confinement.drop_capabilities:
        drop_capabilities()
    if confinement.landlock:
        apply_landlock(confinement.read, confinement.write)
    if sockets is not None:
        sockets.load()
