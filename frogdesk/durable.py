"""Durable atomic writes: temp file, fsync, rename, folder fsync; a crash leaves old or new."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path


def fsync_dir(path: Path) -> None:
    """Make a folder's entries (a rename, a new or removed file) durable; best effort."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot fsync a folder; the rename itself is still atomic
    finally:
        os.close(fd)


def temp_name(path: Path, folder: Path | None = None) -> Path:
    """A fresh hidden temp path for `path`, in `folder` (default: beside it)."""
    where = folder if folder is not None else path.parent
    return where / f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp"


def write_new(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Create `path` (it must not exist) with `data`, fsynced; no symlink is followed."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace `path` with `data` so that a crash leaves the old file or the new, never half.

    The data goes to a temp file beside `path`, is fsynced, renamed over `path`, and the
    folder is fsynced so the rename survives a power cut. `mode` defaults to the existing
    file's permission bits (0o644 for a new file); on any failure the temp file is removed
    and `path` is untouched.
    """
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
    tmp = temp_name(path)
    try:
        write_new(tmp, data, mode)
        os.chmod(tmp, mode)  # the umask may have narrowed what os.open set
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if exc.filename is None:  # a failed write names no file: name the one meant
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)


def publish(tmp: Path, path: Path) -> None:
    """Move a finished temp file (or symlink) over `path` durably: its data fsynced, the
    rename made, the folder fsynced. For files written in pieces (a download, a copy)."""
    if not tmp.is_symlink():
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str, mode: int | None = None) -> None:
    """atomic_write_bytes of `text` as UTF-8; text that cannot be encoded fails before any write."""
    atomic_write_bytes(path, text.encode("utf-8"), mode)
