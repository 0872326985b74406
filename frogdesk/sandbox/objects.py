"""Git objects written in the sandbox: a private store, moved additively into the user's own.

Inside the sandbox the user's object store is read-only. Sandboxed git writes new objects
to a private, session-owned directory (GIT_OBJECT_DIRECTORY) and reads the user's objects
as an alternate. After each command FrogDesk, outside the sandbox, moves what it finds
there into the user's store: loose objects only after their content hashes to their name,
linked in so nothing existing is ever replaced; packs through `git index-pack`, which
checks every object and writes its own index (the sandbox's index is never trusted).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import tempfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from frogdesk.sandbox.gitrun import run_git
from frogdesk.sandbox.shells.protocol import ShellResult

_HEX_DIR = re.compile(r"[0-9a-f]{2}")
_HEX_REST = {38: "sha1", 62: "sha256"}
_OBJECT_TYPES = {b"blob", b"tree", b"commit", b"tag"}
_PACK_NAME = re.compile(r"pack-[0-9a-f]{40}([0-9a-f]{24})?\.pack")
_PACK_COMPANIONS = (".idx", ".rev", ".bitmap", ".keep", ".promisor", ".mtimes", ".pack")
_CHUNK = 1 << 16
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class ObjectRoute:
    """Where sandboxed git writes new objects, and the repository they are moved into."""

    private: Path
    """The session's own object directory, writable inside the sandbox."""
    git_dir: Path
    """The user's (common) git dir; its `objects` is read-only inside the sandbox."""

    @property
    def store(self) -> Path:
        """The user's object store."""
        return self.git_dir / "objects"

    def prepare(self) -> None:
        """Create the private object directory (and its pack folder)."""
        (self.private / "pack").mkdir(parents=True, exist_ok=True)
        (self.private / "info").mkdir(parents=True, exist_ok=True)

    def env(self) -> dict[str, str]:
        """The variables that send sandboxed git's writes to the private directory."""
        return {
            "GIT_OBJECT_DIRECTORY": str(self.private),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": _alternate_entry(self.store),
        }


@dataclass(frozen=True)
class SyncReport:
    """What one move from the private store into the user's store did."""

    loose: int = 0
    """Loose objects added to the user's store."""
    present: int = 0
    """Loose objects the user's store already had (left as they were)."""
    packs: int = 0
    """Packs indexed into the user's store."""
    rejected: tuple[str, ...] = ()
    """Files not moved, each with the reason (corrupt, misnamed, not a regular file)."""
    errors: tuple[str, ...] = field(default_factory=tuple)
    """Failures writing to the user's store; the objects stay private for the next try."""


def _alternate_entry(path: Path) -> str:
    """One GIT_ALTERNATE_OBJECT_DIRECTORIES entry; quoted C-style when it holds ':' or '"'."""
    text = str(path)
    if ":" not in text and '"' not in text and "\\" not in text:
        return text
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _open_regular(path: Path) -> int:
    """An fd on path if it is a regular file (never following a link or blocking on a FIFO)."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _copy_verified(fd: int, out: int, oid: str, algorithm: str) -> str | None:
    """Copy a loose object from fd to out, checking it; None if sound, else what is wrong."""
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
            return f"not zlib data ({exc})"
        if inflate.unused_data:
            return "garbage after the compressed object"
        digest.update(data)
        if len(header) < 64 and b"\0" not in header:
            header += data[:64]
        length += len(data)
    if not inflate.eof:
        return "truncated"
    kind, _, rest = header.partition(b" ")
    size, nul, _ = rest.partition(b"\0")
    if kind not in _OBJECT_TYPES or not nul or not size.isdigit():
        return "no valid object header"
    if int(size) != length - len(kind) - len(size) - 2:
        return "size does not match its header"
    if digest.hexdigest() != oid:
        return "content does not hash to its name"
    return None


def _move_loose(src: Path, store: Path, oid: str, algorithm: str) -> bool:
    """Link one verified loose object into store; False if store had it. Raises ValueError if bad."""
    target_dir = store / oid[:2]
    target = target_dir / oid[2:]
    if os.path.lexists(target):
        return False
    target_dir.mkdir(exist_ok=True)
    fd = _open_regular(src)
    try:
        out, tmp_name = tempfile.mkstemp(prefix="tmp_obj_", dir=target_dir)
        try:
            try:
                problem = _copy_verified(fd, out, oid, algorithm)
                if problem is not None:
                    raise ValueError(problem)
                os.fchmod(out, 0o444)
                os.fsync(out)
            finally:
                os.close(out)
            try:
                os.link(tmp_name, target)  # a link never replaces an existing file
            except FileExistsError:
                return False
            return True
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp_name)
    finally:
        os.close(fd)


def _git_env(git_dir: Path, objects: Path) -> dict[str, str]:
    """Pin git to the user's git dir; its writes go to objects."""
    return {
        "GIT_DIR": str(git_dir),
        "GIT_OBJECT_DIRECTORY": str(objects),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": _alternate_entry(git_dir / "objects"),
    }


def _index_pack(src: Path, git_dir: Path) -> str | None:
    """Index a pack into the user's store with git's own checks; None on success, else why not.

    git writes the checked pack and its index into a quarantine folder inside the store;
    only a complete pack is linked into `objects/pack`, its index last, nothing replaced.
    """
    store = git_dir / "objects"
    quarantine = Path(tempfile.mkdtemp(prefix="tmp_objdir-frogdesk-", dir=store))
    try:
        (quarantine / "pack").mkdir()
        fd = _open_regular(src)
        try:
            done = run_git(
                git_dir,
                ["index-pack", "--stdin"],
                stdin=fd,
                env=_git_env(git_dir, quarantine),
                ok_codes=range(256),
            )
        finally:
            os.close(fd)
        if done.returncode != 0:
            lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
            return lines[-1] if lines else f"git index-pack exited with {done.returncode}"
        made = sorted((quarantine / "pack").glob("pack-*.pack"))
        if len(made) != 1:
            return "git index-pack wrote no pack"
        (store / "pack").mkdir(exist_ok=True)
        for suffix in (".pack", ".rev", ".idx"):  # git looks for packs by their index
            written = made[0].with_suffix(suffix)
            if written.exists():
                with contextlib.suppress(FileExistsError):
                    os.link(written, store / "pack" / written.name)
        return None
    finally:
        shutil.rmtree(quarantine, ignore_errors=True)


def _remove_pack(pack: Path) -> None:
    for suffix in _PACK_COMPANIONS:
        with contextlib.suppress(FileNotFoundError):
            pack.with_suffix(suffix).unlink()


def _sync_loose(route: ObjectRoute) -> tuple[int, int, list[str], list[str]]:
    added = present = 0
    rejected: list[str] = []
    errors: list[str] = []
    for folder in sorted(route.private.iterdir()):
        if not _HEX_DIR.fullmatch(folder.name) or folder.is_symlink() or not folder.is_dir():
            continue
        for entry in sorted(folder.iterdir()):
            algorithm = _HEX_REST.get(len(entry.name))
            if algorithm is None or not re.fullmatch(r"[0-9a-f]+", entry.name):
                continue  # git's temporary files, or nothing git would read
            oid = folder.name + entry.name
            try:
                if _move_loose(entry, route.store, oid, algorithm):
                    added += 1
                else:
                    present += 1
            except ValueError as exc:
                rejected.append(f"{folder.name}/{entry.name}: {exc}")
                continue
            except OSError as exc:
                if exc.filename is not None and Path(exc.filename) == entry:
                    rejected.append(f"{folder.name}/{entry.name}: {exc.strerror or exc}")
                else:
                    errors.append(f"{folder.name}/{entry.name}: {exc}")
                continue
            entry.unlink()
        with contextlib.suppress(OSError):
            folder.rmdir()  # only when empty
    return added, present, rejected, errors


def sync_objects(route: ObjectRoute) -> SyncReport:
    """Move every sound object of the private store into the user's; never touch one already there.

    Call it only when no sandboxed command is running. What is moved is removed from the
    private store (sandboxed git still sees it, through the alternate). Corrupt files stay
    where they are and are reported; so do objects that could not be written.
    """
    if not route.private.is_dir():
        return SyncReport()
    added, present, rejected, errors = _sync_loose(route)
    packs = 0
    pack_dir = route.private / "pack"
    if pack_dir.is_dir() and not pack_dir.is_symlink():
        for pack in sorted(pack_dir.glob("pack-*.pack")):
            if not _PACK_NAME.fullmatch(pack.name):
                continue
            try:
                problem = _index_pack(pack, route.git_dir)
            except (OSError, ValueError) as exc:
                rejected.append(f"pack/{pack.name}: {exc}")
                continue
            if problem is not None:
                rejected.append(f"pack/{pack.name}: {problem}")
                continue
            _remove_pack(pack)
            packs += 1
    return SyncReport(
        loose=added,
        present=present,
        packs=packs,
        rejected=tuple(rejected),
        errors=tuple(errors),
    )


def sync_notice(report: SyncReport) -> str:
    """What the command's output should say about objects that did not reach the repository."""
    lines: list[str] = []
    if report.errors:
        lines.append(
            f"frogdesk: {len(report.errors)} new git object(s) could not be copied to the "
            f"repository yet (will retry): {report.errors[0]}"
        )
    if report.rejected:
        lines.append(
            f"frogdesk: {len(report.rejected)} file(s) in the private object store were refused "
            f"as corrupt: {report.rejected[0]}"
        )
    return "\n".join(lines)


def _safe_sync(route: ObjectRoute) -> SyncReport:
    """sync_objects, with a failure to read the private store reported instead of raised."""
    try:
        return sync_objects(route)
    except OSError as exc:
        return SyncReport(errors=(str(exc),))


def run_and_sync(route: ObjectRoute | None, run: Callable[[], ShellResult]) -> ShellResult:
    """Run a command, then move its objects into the user's store, however the command ended."""
    if route is None:
        return run()
    _safe_sync(route)  # leftovers of an interrupted earlier run
    try:
        result = run()
    finally:
        report = _safe_sync(route)
    notice = sync_notice(report)
    if not notice:
        return result
    stderr = result.stderr + ("\n" if result.stderr and not result.stderr.endswith("\n") else "")
    return replace(result, stderr=stderr + notice + "\n")
