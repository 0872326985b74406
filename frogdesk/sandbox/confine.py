"""Kernel confinement a process applies to itself: capabilities, Landlock, seccomp filters."""

from __future__ import annotations

import ctypes
import errno
import os
import socket
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from frogdesk.sandbox.errors import LandlockUnsupported

if TYPE_CHECKING:
    import pyseccomp
    from landlockpy import AccessFS, AccessNet, Scope

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


@dataclass(frozen=True)
class LandlockFeature:
    """One Landlock feature the landlock level relies on, and the ABI that brought it."""

    abi: int
    name: str
    without: str
    """What a kernel without it would leave open."""


LANDLOCK_FEATURES = (
    LandlockFeature(1, "file rules", "nothing would limit what a command reads or writes"),
    LandlockFeature(2, "refer", "every rename or link between folders would fail"),
    LandlockFeature(3, "truncate", "truncate() could empty any file you can write"),
    LandlockFeature(4, "TCP rules", "TCP would rest on the seccomp filter alone"),
    LandlockFeature(5, "device ioctl", "any ioctl on the devices a command may open"),
    LandlockFeature(6, "signal scoping", "a command could stop or kill your other processes"),
    LandlockFeature(6, "abstract socket scoping", "abstract sockets would rest on seccomp alone"),
)
"""Everything the level's ruleset must get from the kernel; with one missing it is refused.

Landlock's best-effort mode would drop these without a word (ABI 4: no signal scoping,
ABI 2: no truncate right), so the level checks them before it is offered and the
supervisor builds its ruleset strictly.
"""
LANDLOCK_REQUIRED_ABI = max(feature.abi for feature in LANDLOCK_FEATURES)
LANDLOCK_LINUX = {1: "5.13", 2: "5.19", 3: "6.2", 4: "6.7", 5: "6.10", 6: "6.12"}
"""The first Linux release of each ABI (distribution kernels may carry one back)."""


def landlock_gives(abi: int) -> list[LandlockFeature]:
    """The level's features this ABI has."""
    return [feature for feature in LANDLOCK_FEATURES if feature.abi <= abi]


def landlock_missing(abi: int) -> list[LandlockFeature]:
    """The level's features this ABI lacks (empty: the level holds on this kernel)."""
    return [feature for feature in LANDLOCK_FEATURES if feature.abi > abi]


def landlock_refusal(abi: int, missing: Sequence[LandlockFeature]) -> str:
    """One line saying why the landlock level cannot hold on this kernel."""
    if abi < 1:
        return "the kernel has no Landlock (or it is disabled)"
    lacks = ", ".join(f"{f.name} (ABI {f.abi}: {f.without})" for f in missing)
    return (
        f"Landlock ABI {abi} lacks what the landlock level relies on (ABI "
        f"{LANDLOCK_REQUIRED_ABI}, Linux {LANDLOCK_LINUX[LANDLOCK_REQUIRED_ABI]} or later): {lacks}"
    )


def _wanted_rights(abi: int) -> tuple[AccessFS, AccessNet, Scope]:
    """The ruleset's handled rights on this ABI: everything the level relies on (checked by
    the caller), plus the newer rights where the kernel has them.

    The newer ones (connecting to Unix sockets by path, ABI 9; UDP, ABI 10) sit behind
    the seccomp socket filter, which refuses every socket() at this level, so a kernel
    without them loses nothing the level promises.
    """
    from landlockpy import AccessNet, Scope, fs_for_abi, net_for_abi, scope_for_abi

    fs = fs_for_abi(abi)  # every file right this kernel knows: each one is denied unless granted
    net = (
        AccessNet.BIND_TCP | AccessNet.CONNECT_TCP | AccessNet.BIND_UDP | AccessNet.CONNECT_SEND_UDP
    ) & net_for_abi(abi)
    scoped = (Scope.SIGNAL | Scope.ABSTRACT_UNIX_SOCKET) & scope_for_abi(abi)
    return fs, net, scoped


def apply_landlock(read: Iterable[str], write: Iterable[str]) -> None:
    """Restrict this process and its future children to the given paths (and no TCP).

    Refuses (LandlockUnsupported) on a kernel that lacks a feature in LANDLOCK_FEATURES,
    rather than enforcing less than the level promises.
    """
    from landlockpy import AccessFS, Ruleset

    abi = landlock_abi()
    missing = landlock_missing(abi)
    if missing:
        raise LandlockUnsupported(landlock_refusal(abi, missing))
    handled_fs, handled_net, scoped = _wanted_rights(abi)
    file_only = (
        AccessFS.EXECUTE
        | AccessFS.WRITE_FILE
        | AccessFS.READ_FILE
        | AccessFS.TRUNCATE
        | AccessFS.IOCTL_DEV
    )
    # Strict: a right the kernel refuses is an error, never silently dropped.
    with Ruleset(
        handled_fs=handled_fs, handled_net=handled_net, scoped=scoped, best_effort=False
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


# What the bwrap level's namespaces hide and a landlock-level command could otherwise reach.
# ENOSYS, as from a kernel without the call: tools then take their fallbacks.
HOST_REACH_ENOSYS = (
    # The user's keyrings are per user, not per process: a Kerberos KEYRING: cache or a
    # token in @u is readable by every process of the user (bwrap: a new user namespace,
    # so other keyrings; ENOKEY). request_key can also start /sbin/request-key on the host.
    "keyctl",
    "add_key",
    "request_key",
    # Kernel attack surface, and with a lax sysctl (perf_event_paranoid < 1, unprivileged
    # BPF) a view of every process on the machine; no build or test needs them.
    "bpf",
    "perf_event_open",
    # Lets a command pause the kernel mid-copy: the usual tool to win kernel races.
    "userfaultfd",
    # Opens any file on a file system by handle, around every path rule (needs
    # CAP_DAC_READ_SEARCH, which is dropped; refused here too in case a capability is back).
    # name_to_handle_at stays: a handle is nothing without this call.
    "open_by_handle_at",
    # Compare or take file descriptors of another process. Landlock already refuses both
    # outside the command's own domain (they need ptrace access); nothing inside needs them.
    "kcmp",
    "pidfd_getfd",
    # Port I/O (needs CAP_SYS_RAWIO, dropped): x86 only, skipped where the arch lacks it.
    "iopl",
    "ioperm",
    # Mounts: Landlock refuses them to a sandboxed process already; named here so a kernel
    # bug there is not the only wall.
    "mount",
    "umount2",
    "pivot_root",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "mount_setattr",
    # clone3's flags live in memory a filter cannot read, so namespace flags could not be
    # refused; ENOSYS makes libc (glibc, musl, Go) fall back to clone(), whose flags it can.
    "clone3",
)
# Namespaces: a new user namespace hands a command every capability again (inside it), the
# way to most kernel exploits; setns joins another's. EPERM, as where they are disabled.
HOST_REACH_EPERM = ("unshare", "setns")
CLONE_NAMESPACE_FLAGS = (  # CLONE_NEWTIME is unshare/clone3 only: clone's low byte is a signal
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)
TTY_INJECTION_IOCTLS = (0x5412, 0x541C)
"""TIOCSTI and TIOCLINUX: typing into a terminal. The command has none (a new session, and
/dev/pts is out of reach); refused as bwrap's --new-session does, in case one is inherited."""
# Kept, and why: ptrace, process_vm_readv/writev and /proc/PID/mem reach only processes in
# the command's own Landlock domain (or one nested in it), so debuggers work inside and the
# user's other processes stay out of reach (tests/attacks/test_host_syscalls.py shows it);
# signals and abstract Unix sockets are scoped by Landlock (ABI 6); chroot needs a dropped
# capability and reaches nothing Landlock does not already govern.


def deny_host_reach(flt: pyseccomp.SyscallFilter) -> None:
    """Add the rules that refuse HOST_REACH_* (keyrings, namespaces, bpf, ...) to a filter."""
    import pyseccomp

    for name, answer in [
        *((n, errno.ENOSYS) for n in HOST_REACH_ENOSYS),
        *((n, errno.EPERM) for n in HOST_REACH_EPERM),
    ]:
        try:
            flt.add_rule(pyseccomp.ERRNO(answer), name)
        except ValueError:  # not a call on this architecture (iopl on arm64)
            continue
    refuse = pyseccomp.ERRNO(errno.EPERM)
    for flag in CLONE_NAMESPACE_FLAGS:
        # clone's flags are its first argument on x86-64 and arm64 (not on s390).
        flt.add_rule(refuse, "clone", pyseccomp.Arg(0, pyseccomp.MASKED_EQ, flag, flag))
    for request in TTY_INJECTION_IOCTLS:
        flt.add_rule(refuse, "ioctl", pyseccomp.Arg(1, pyseccomp.MASKED_EQ, LOW_32_BITS, request))


def command_filter(confinement: Confinement) -> pyseccomp.SyscallFilter | None:
    """The seccomp filter a confinement asks for: sockets and/or host reach; None for none."""
    if not (confinement.deny_network or confinement.landlock):
        return None
    if confinement.deny_network:
        flt = socket_filter()
    else:
        import pyseccomp

        flt = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    if confinement.landlock:
        # The landlock level shares the host's namespaces: these are what bwrap's hide.
        deny_host_reach(flt)
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
    sockets = command_filter(confinement)
    if confinement.drop_capabilities:
        drop_capabilities()
    if confinement.landlock:
        apply_landlock(confinement.read, confinement.write)
    if sockets is not None:
        sockets.load()
