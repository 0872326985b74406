"""Safe, atomic file operations inside the user's repository: no `.git`, no escape, no half-writes."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from frogdesk.review.errors import UnsafePath
from frogdesk.review.model import SYMLINK_MODE
from frogdesk.review.target import FileState


def check_path(root: Path, rel: str) -> Path:
    """The absolute path for rel inside root; raise UnsafePath where writing it could escape."""
    pure = PurePosixPath(rel)
    if not rel or pure.is_absolute() or any(part in ("..", ".", "") for part in pure.parts):
        raise UnsafePath(f"{rel!r} is not a plain path inside the repository")
    if any(part.lower() == ".git" for part in pure.parts):
        raise UnsafePath(f"{rel}: files inside .git are never written")
    here = root
    for part in pure.parts[:-1]:
        here = here / part
        if here.is_symlink():
            raise UnsafePath(
                f"{rel}: {here.relative_to(root)} is a symlink; nothing is written through it"
            )
        if here.exists() and not here.is_dir():
            raise UnsafePath(f"{rel}: {here.relative_to(root)} is not a directory")
    return root / pure


def read_state(root: Path, rel: str) -> FileState | None:
    """The current state of rel (None: absent); a symlink is its target, never followed."""
    path = check_path(root, rel)
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return FileState(os.fsencode(os.readlink(path)), SYMLINK_MODE)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePath(f"{rel}: a directory or special file is in the way")
    mode = "100755" if info.st_mode & stat.S_IXUSR else "100644"
    return FileState(path.read_bytes(), mode)


@dataclass
class WriteReport:
    """What an atomic write changed on disk, besides the files themselves."""

    created_dirs: list[str] = field(default_factory=list)
    removed_dirs: list[str] = field(default_factory=list)


def _stage(path: Path, state: FileState, scratch: Path) -> Path:
    """Write state to a fresh temporary file in scratch, verified, and return its path."""
    tmp = scratch / f"{os.getpid()}-{secrets.token_hex(6)}"
    stage_file(tmp, state, file_mode(path, state.mode))
    return tmp


def stage_file(tmp: Path, state: FileState, perms: int) -> None:
    """Create tmp (it must not exist) holding state, fsynced and read back; removed on failure.

    A regular file gets its permission bits before its first byte, so a crash never
    leaves the complete content under other bits (recovery accepts a staged file by both).
    """
    if state.mode == SYMLINK_MODE:
        os.symlink(os.fsdecode(state.content), tmp)
        if os.fsencode(os.readlink(tmp)) != state.content:
            raise OSError(f"verification failed for {tmp}")
        return
    try:
        _write_with_bits(tmp, state.content, perms)
        if tmp.read_bytes() != state.content:
            raise OSError(f"verification failed for {tmp}")
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write_with_bits(path: Path, data: bytes, perms: int) -> None:
    """Create path with exactly `perms` (the umask aside), then write and fsync data."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, perms)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def tidy_scratch(scratch: Path) -> None:
    """Remove what a crash left in scratch, and scratch itself once it is empty."""
    _sweep_dead(scratch)
    with contextlib.suppress(OSError):
        scratch.rmdir()  # only when empty: another process may be writing there


def _sweep_dead(scratch: Path) -> None:
    """Remove the temporary files that processes which died (a crash, a kill) left in scratch."""
    with contextlib.suppress(FileNotFoundError):
        for entry in scratch.iterdir():
            pid, _, token = entry.name.partition("-")
            if pid.isdigit() and token and not _alive(int(pid)):
                entry.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive
    return True


def file_mode(path: Path, mode: str) -> int:
    """Permission bits: keep the existing file's, adjusting the executable bits to the git mode."""
    try:
        current = stat.S_IMODE(path.lstat().st_mode) if not path.is_symlink() else 0o644
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        current = 0o666 & ~umask
    if mode == "100755":
        return current | ((current & 0o444) >> 2) | stat.S_IXUSR
    return current & ~0o111


def ensure_dirs(root: Path, rel: str, report: WriteReport) -> None:
    """Create the missing parent folders of rel, recording them in report."""
    parts = PurePosixPath(rel).parts[:-1]
    here = root
    for i, part in enumerate(parts):
        here = here / part
        if not here.exists():
            here.mkdir()
            report.created_dirs.append("/".join(parts[: i + 1]))


def prune_dirs(root: Path, rel: str, report: WriteReport) -> None:
    """Remove directories a deletion left empty, as git does."""
    parent = (root / rel).parent
    while parent != root:
        try:
            parent.rmdir()
        except OSError:
            return
        report.removed_dirs.append(parent.relative_to(root).as_posix())
        parent = parent.parent


def write_states(
    root: Path,
    writes: Mapping[str, FileState | None],
    expected: Mapping[str, FileState | None],
    scratch: Path,
) -> WriteReport:
    """Bring every path to its state (None: delete), all or nothing.

    Each path's current state must still equal `expected` (the state the plan was made
    against); new contents are staged and verified in temporary files in `scratch` (a
    folder outside root, on its file system: a temp file a crash leaves is never taken for
    one of root's files), then moved in place with os.replace; if anything fails, every
    path already changed is put back.
    """
    report = WriteReport()
    for rel in writes:
        if read_state(root, rel) != expected.get(rel):
            raise UnsafePath(
                f"{rel} changed while the apply was being prepared; nothing was written"
            )
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        _sweep_dead(scratch)
        _write_all(root, writes, expected, scratch, report)
    finally:
        tidy_scratch(scratch)
    for rel, state in writes.items():
        if state is None:
            prune_dirs(root, rel, report)
    return report


def _write_all(
    root: Path,
    writes: Mapping[str, FileState | None],
    expected: Mapping[str, FileState | None],
    scratch: Path,
    report: WriteReport,
) -> None:
    """Stage every new content, then move each in place; on failure put everything back."""
    staged: dict[str, Path] = {}
    done: list[str] = []
    try:
        for rel, state in writes.items():
            if state is not None:
                ensure_dirs(root, rel, report)
                staged[rel] = _stage(check_path(root, rel), state, scratch)
        for rel, state in writes.items():
            path = check_path(root, rel)
            if state is None:
                if expected.get(rel) is not None:
                    path.unlink()
            else:
                os.replace(staged.pop(rel), path)
            done.append(rel)
    except BaseException:
        for tmp in staged.values():
            tmp.unlink(missing_ok=True)
        _roll_back(root, done, expected, scratch)
        for rel in reversed(report.created_dirs):
            with contextlib.suppress(OSError):
                (root / rel).rmdir()
        raise


def _roll_back(
    root: Path, done: list[str], expected: Mapping[str, FileState | None], scratch: Path
) -> None:
    """Put back the paths already changed by a failed write_states."""
    for rel in reversed(done):
        path = root / rel
        prior = expected.get(rel)
        if prior is None:
            path.unlink(missing_ok=True)
        else:
            os.replace(_stage(path, prior, scratch), path)
