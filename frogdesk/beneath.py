"""Opening paths beneath a directory descriptor, in the call that checks them (openat2).

FrogDesk's host side works on folders the sandbox can write while a sandboxed process may
still run: a path checked by name and then opened by name is a race the process wins (swap
a folder for a link between the two). Everything here resolves a path relative to a
directory descriptor, and the kernel refuses, in the same call, any step that would leave
it: `..` above it, an absolute link, a link leading out (RESOLVE_BENEATH), and /proc's
magic links. Links that stay beneath are followed unless `follow_links=False`.

Kernels older than 5.6 have no openat2; there the same rule is walked one component at a
time with O_NOFOLLOW on descriptors, links resolved by hand, never by name from the root.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import PurePosixPath

from frogdesk.errors import EscapeError

RESOLVE_NO_XDEV = 0x01
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
SYS_OPENAT2 = 437
"""The same number on x86_64, arm64 and every architecture with the generic syscall table."""
MAX_LINKS = 40
"""Links followed in one resolution, as the kernel's own limit."""
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


class _OpenHow(ctypes.Structure):
    _fields_ = (
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    )


_state: dict[str, object] = {}


def _libc() -> ctypes.CDLL:
    libc = _state.get("libc")
    if libc is None:
        libc = ctypes.CDLL(None, use_errno=True)
        _state["libc"] = libc
    assert isinstance(libc, ctypes.CDLL)
    return libc


def _openat2(dirfd: int, path: str, flags: int, mode: int, resolve: int) -> int:
    """openat2(2); OSError with its errno; ENOSYS where the kernel lacks it."""
    how = _OpenHow(flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0, resolve)
    fd = _libc().syscall(
        SYS_OPENAT2,
        ctypes.c_int(dirfd),
        ctypes.c_char_p(os.fsencode(path)),
        ctypes.byref(how),
        ctypes.c_size_t(ctypes.sizeof(how)),
    )
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), path)
    return int(fd)


def has_openat2() -> bool:
    """True when the kernel answers openat2 (Linux 5.6 and newer)."""
    known = _state.get("openat2")
    if known is None:
        try:
            os.close(_openat2(-100, "/", DIR_FLAGS, 0, RESOLVE_BENEATH))  # AT_FDCWD
            known = True
        except OSError as exc:
            known = exc.errno not in (errno.ENOSYS, errno.EPERM)  # EPERM: a seccomp filter
        _state["openat2"] = known
    return bool(known)


def _parts(path: str) -> list[str]:
    if "\x00" in path:
        raise ValueError("path contains a NUL character")
    if path.startswith("/"):
        raise EscapeError(errno.EXDEV, "an absolute path is not beneath its root", path)
    return [p for p in path.split("/") if p not in ("", ".")]


def _walk(root: int, path: str, flags: int, mode: int, follow_links: bool) -> int:
    """openat2's rule without openat2: one component at a time, each opened O_NOFOLLOW."""
    pending = _parts(path)
    stack = [os.dup(root)]
    links = 0
    try:
        while True:
            if not pending:
                # The root itself, or a path that ended in `..` or a link to a folder.
                if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
                    raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
                return os.open(".", flags | os.O_CLOEXEC, dir_fd=stack[-1])
            name = pending.pop(0)
            if name == "..":
                if len(stack) == 1:
                    raise EscapeError(errno.EXDEV, "the path climbs above its root", path)
                os.close(stack.pop())
                continue
            last = not pending
            try:
                info = os.stat(name, dir_fd=stack[-1], follow_symlinks=False)
            except FileNotFoundError:
                if last and flags & os.O_CREAT:
                    return os.open(
                        name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=stack[-1]
                    )
                raise
            if stat.S_ISLNK(info.st_mode):
                if not follow_links:
                    raise EscapeError(errno.ELOOP, "the path goes through a link", path)
                links += 1
                if links > MAX_LINKS:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
                target = os.readlink(name, dir_fd=stack[-1])
                pending = _parts(target) + pending
                continue
            if last:
                return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=stack[-1])
            stack.append(os.open(name, DIR_FLAGS | os.O_NOFOLLOW, dir_fd=stack[-1]))
    finally:
        for fd in stack:
            os.close(fd)


def open_beneath(
    root: int, path: str, flags: int = os.O_RDONLY, mode: int = 0o666, *, follow_links: bool = True
) -> int:
    """A descriptor for `path` resolved beneath the directory descriptor `root`.

    EscapeError when any step would leave root (or, with follow_links=False, goes through a
    link); other OSErrors as open(2) gives them. The descriptor is close-on-exec.
    """
    resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS
    if not follow_links:
        resolve |= RESOLVE_NO_SYMLINKS
    if not has_openat2():
        return _walk(root, path, flags, mode, follow_links)
    _parts(path)  # the same refusals as the walk: NUL, absolute
    try:
        return _openat2(root, path or ".", flags, mode, resolve)
    except OSError as exc:
        if exc.errno == errno.EXDEV:
            raise EscapeError(errno.EXDEV, "the path leads out of its root", path) from None
        if exc.errno == errno.ELOOP and not follow_links:
            raise EscapeError(errno.ELOOP, "the path goes through a link", path) from None
        raise


def open_root(path: str | os.PathLike[str]) -> int:
    """A directory descriptor for a root folder that is itself trusted (a recorded path)."""
    return os.open(path, DIR_FLAGS)


@contextlib.contextmanager
def opened(fd: int) -> Iterator[int]:
    """Close fd on leaving the block."""
    try:
        yield fd
    finally:
        os.close(fd)


def split_parent(path: str) -> tuple[str, str]:
    """(the parent folder, the last name) of a relative path; the last name is never `..`."""
    parts = _parts(path)
    if not parts or parts[-1] == "..":
        raise ValueError(f"{path!r} names no entry of a folder")
    return "/".join(parts[:-1]), parts[-1]


def open_parent(root: int, path: str, *, follow_links: bool = True) -> tuple[int, str]:
    """A descriptor of the folder holding `path` (beneath root) and the entry's name in it.

    The entry itself is not resolved: renameat/unlinkat/readlinkat on (fd, name) act on the
    name in that very folder, whatever anyone renames above it afterwards.
    """
    parent, name = split_parent(path)
    return open_beneath(root, parent, DIR_FLAGS, follow_links=follow_links), name


def makedirs_beneath(root: int, path: str, mode: int = 0o777) -> int:
    """Make each missing folder of `path` beneath root; a descriptor of the last one."""
    current = os.dup(root)
    try:
        for name in _parts(path):
            if name == "..":
                raise EscapeError(errno.EXDEV, "a folder to make climbs above its root", path)
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, mode, dir_fd=current)
            step = open_beneath(current, name, DIR_FLAGS)
            os.close(current)
            current = step
        return current
    except BaseException:
        os.close(current)
        raise


def fd_path(fd: int) -> str:
    """Where the kernel says an open descriptor is now (for messages and checks, not for use)."""
    return os.readlink(f"/proc/self/fd/{fd}")


def relative_to_root(root: int, fd: int) -> PurePosixPath | None:
    """fd's path below root's, as the kernel names both now; None when not below it."""
    top, inner = fd_path(root), fd_path(fd)
    if inner == top:
        return PurePosixPath(".")
    prefix = top.rstrip("/") + "/"
    return PurePosixPath(inner[len(prefix) :]) if inner.startswith(prefix) else None
