"""One loose git object from the sandbox's store, checked as it is copied into the user's.

Everything works on folder descriptors: the source is an open file, the user's store an
open folder, and every name written there comes from the object id the content hashed to.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import zlib

from frogdesk.beneath import fd_path, makedirs_beneath, opened

_OBJECT_TYPES = {b"blob", b"tree", b"commit", b"tag"}
_CHUNK = 1 << 16


def copy_verified(fd: int, out: int, algorithm: str) -> str:
    """Copy a loose object from fd to out, checking it; its object id. ValueError if it is not sound."""
    inflate = zlib.decompressobj()
    digest = hashlib.new(algorithm)
    header = b""
    length = 0
    while chunk := os.read(fd, _CHUNK):
        view = memoryview(chunk)
        while view:
            view = view[os.write(out, view) :]
        try:
            data = inflate.decompress(chunk)
        except zlib.error as exc:
            raise ValueError(f"not zlib data ({exc})") from None
        if inflate.unused_data:
            raise ValueError("garbage after the compressed object")
        digest.update(data)
        if len(header) < 64 and b"\0" not in header:
            header += data[:64]
        length += len(data)
    if not inflate.eof:
        raise ValueError("truncated")
    kind, _, rest = header.partition(b" ")
    size, nul, _ = rest.partition(b"\0")
    if kind not in _OBJECT_TYPES or not nul or not size.isdigit():
        raise ValueError("no valid object header")
    if int(size) != length - len(kind) - len(size) - 2:
        raise ValueError("size does not match its header")
    return digest.hexdigest()


def exists_at(folder: int, name: str) -> bool:
    """Whether anything (a link included) has the name in a folder descriptor."""
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return False
    return True


def _temp_in(folder: int) -> tuple[int, str]:
    """A new private file in a folder descriptor, write-only; its fd and name."""
    for _ in range(100):
        name = f"tmp_obj_{secrets.token_hex(8)}"
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            return os.open(name, flags, 0o600, dir_fd=folder), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", fd_path(folder))


def move_loose(src: int, store: int, oid: str, algorithm: str) -> bool:
    """Link one verified loose object into the store; False if it had it. ValueError if bad.

    Every name in the user's store is FrogDesk's own: the fan-out folder and file come from
    the object id the content hashed to, never from what the private store's listing said.
    """
    with opened(makedirs_beneath(store, oid[:2])) as target:
        if exists_at(target, oid[2:]):
            return False
        out, tmp_name = _temp_in(target)
        try:
            try:
                found = copy_verified(src, out, algorithm)
                if found != oid:
                    raise ValueError("content does not hash to its name")
                os.fchmod(out, 0o444)
                os.fsync(out)
            finally:
                os.close(out)
            try:  # a link never replaces an existing file
                os.link(
                    tmp_name, found[2:], src_dir_fd=target, dst_dir_fd=target, follow_symlinks=False
                )
            except FileExistsError:
                return False
            return True
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp_name, dir_fd=target)
