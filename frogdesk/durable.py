"""Durable atomic writes: temp file, fsync, rename, folder fsync; a crash leaves old or new.

A crash between the temp file's creation and its rename leaves the temp file behind; it
carries its writer's pid in its name, so a later write to the same folder (or a sweep at
startup) can tell that its writer is gone and remove it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import time
from pathlib import Path

TEMP_PATTERN = re.compile(r"\.(?P<target>.+)\.(?P<pid>[0-9]+)-[0-9a-f]{8}\.tmp")
"""The names temp_name makes: `.NAME.PID-HEX.tmp`."""
WRITER_GRACE = 30.0
"""Seconds a temp file is never swept, whatever its pid says: any atomic write ends well
within it, so a writer whose pid this process cannot see (another PID namespace sharing
the folder) is never raced."""
WRITER_STALE = 3600.0
"""Seconds after which a temp file is swept even if its pid is alive: no atomic write takes
this long, so the pid now belongs to another process."""


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


def pid_alive(pid: int) -> bool:
    """True when a process with this id exists (perhaps another user's)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, it is just not ours to signal
    return True


def writer_gone(pid: int, age: float) -> bool:
    """True when the process `pid` that made a file `age` seconds ago has surely ended."""
    if age >= WRITER_STALE:
        return True
    if age < WRITER_GRACE or pid == os.getpid():
        return False  # young, or ours: perhaps another thread's write in progress
    return not pid_alive(pid)


def sweep_temps(folder: Path) -> list[Path]:
    """Remove the temp files in `folder` that a killed atomic write left; returns them.

    Only regular files named as temp_name names them are looked at, and only those whose
    writer is gone (writer_gone): another process's write in progress is never touched.
    """
    removed: list[Path] = []
    now = time.time()
    with os.scandir(folder) as entries:
        for entry in entries:
            found = TEMP_PATTERN.fullmatch(entry.name)
            if found is None:
                continue
            info = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode):
                continue
            if writer_gone(int(found["pid"]), now - info.st_mtime):
                with contextlib.suppress(FileNotFoundError):  # another sweep was first
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
    return removed


def sweep_tree(folder: Path, depth: int) -> list[Path]:
    """sweep_temps in `folder` and its subfolders down to `depth` levels; never fails."""
    removed: list[Path] = []
    subfolders: list[str] = []
    try:
        removed += sweep_temps(folder)
        if depth > 0:
            with os.scandir(folder) as entries:
                subfolders = [e.path for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        return removed  # cleaning up is never worth failing the command that asked
    for sub in subfolders:
        removed += sweep_tree(Path(sub), depth - 1)
    return removed


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


def atomic_write_bytes(
    path: Path, data: bytes, mode: int | None = None, *, temp_dir: Path | None = None
) -> None:
    """Replace `path` with `data` so that a crash leaves the old file or the new, never half.

    The data goes to a temp file (beside `path`, or in `temp_dir`, which must be on the same
    file system), is fsynced, renamed over `path`, and the folder is fsynced so the rename
    survives a power cut. `mode` defaults to the existing file's permission bits (0o644 for
    a new file); on any failure the temp file is removed and `path` is untouched. Temp files
    that killed writers left in that folder are swept afterwards.
    """
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
    tmp = temp_name(path, temp_dir)
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
    sweep_tree(tmp.parent, 0)


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


def write_new_at(dir_fd: int, name: str, data: bytes, mode: int = 0o644) -> None:
    """write_new of the entry `name` in the folder open as `dir_fd`: it must not exist, no
    link is followed, and its mode is set on the descriptor (the umask may have narrowed it)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(name, flags, mode, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
        os.fsync(fd)
    finally:
        os.close(fd)


def sweep_temps_at(dir_fd: int) -> list[str]:
    """sweep_temps of the folder open as `dir_fd`, by descriptor (for a folder others write:
    no name is followed out of it); the names removed."""
    removed: list[str] = []
    now = time.time()
    try:
        with os.scandir(dir_fd) as entries:
            for entry in entries:
                found = TEMP_PATTERN.fullmatch(entry.name)
                if found is None:
                    continue
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode) and writer_gone(
                    int(found["pid"]), now - info.st_mtime
                ):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(entry.name, dir_fd=dir_fd)
                        removed.append(entry.name)
    except OSError:
        pass  # cleaning up is never worth failing the write that asked
    return removed


def _fsync_fd(fd: int) -> None:
    with contextlib.suppress(OSError):  # some file systems cannot fsync a folder
        os.fsync(fd)


def atomic_write_at(
    dir_fd: int, name: str, data: bytes, mode: int | None = None, *, temp_dir: Path | None = None
) -> None:
    """atomic_write_bytes of the entry `name` in the folder open as `dir_fd`.

    For a folder someone else may be renaming things in: the entry is replaced by renameat
    into that very folder (a link named `name` is replaced, never followed), and nothing is
    done there by a path. The temp file is made in `temp_dir` (a folder only this user
    writes) when given, else beside the entry through the descriptor; a rename from
    `temp_dir` that crosses file systems is done again from beside. `mode` defaults to the
    entry's permission bits when it is a regular file (0o644 otherwise).
    """
    if mode is None:
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            mode = info.st_mode & 0o7777 if stat.S_ISREG(info.st_mode) else 0o644
        except FileNotFoundError:
            mode = 0o644
    if temp_dir is not None:
        tmp = temp_name(Path(name), temp_dir)
        try:
            write_new(tmp, data, mode)
            os.chmod(tmp, mode)  # the umask may have narrowed what os.open set
            os.rename(tmp, name, dst_dir_fd=dir_fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            if exc.errno != errno.EXDEV:
                if exc.filename is None:
                    raise OSError(exc.errno, exc.strerror, name) from exc
                raise
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        else:
            _fsync_fd(dir_fd)
            sweep_tree(temp_dir, 0)
            return
    beside = temp_name(Path(name)).name
    try:
        write_new_at(dir_fd, beside, data, mode)
        os.rename(beside, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(beside, dir_fd=dir_fd)
        if isinstance(exc, OSError) and exc.filename is None:
            raise OSError(exc.errno, exc.strerror, name) from exc
        raise
    _fsync_fd(dir_fd)
    sweep_temps_at(dir_fd)
