"""Git objects written in the sandbox: a private store, moved additively into the user's own.

Inside the sandbox the user's object store is read-only. Sandboxed git writes new objects
to a private, session-owned directory (GIT_OBJECT_DIRECTORY) and reads the user's objects
as an alternate. After each command FrogDesk, outside the sandbox, moves what it finds
there into the user's store: loose objects only after their content hashes to their name,
linked in so nothing existing is ever replaced; packs through `git index-pack`, which
checks every object and writes its own index (the sandbox's index is never trusted).

A process the command left behind may still rename things in the private store while this
runs, so nothing there is used by name from its top: the store is opened once, each folder
in it by one name beneath that descriptor without following links, each file likewise, and
each removal names an entry of a folder already open (DESIGN.md invariant 10).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from frogdesk.beneath import DIR_FLAGS, open_beneath, open_root, opened
from frogdesk.errors import EscapeError
from frogdesk.worktree.git import run_git
from frogdesk.worktree.loose import exists_at, move_loose

_HEX_DIR = re.compile(r"[0-9a-f]{2}")
_HEX = re.compile(r"[0-9a-f]+")
_HEX_REST = {38: "sha1", 62: "sha256"}
_PACK_NAME = re.compile(r"pack-[0-9a-f]{40}([0-9a-f]{24})?\.pack")
_PACK_COMPANIONS = (".idx", ".rev", ".bitmap", ".keep", ".promisor", ".mtimes", ".pack")
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


def _open_regular_at(folder: int, name: str) -> int:
    """An fd on the entry `name` of a folder descriptor if it is a regular file.

    Never follows a link (O_NOFOLLOW on the one component) or blocks on a FIFO.
    """
    fd = os.open(name, _OPEN_FLAGS, dir_fd=folder)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_folder_at(parent: int, name: str) -> int | None:
    """A descriptor of the sub-folder `name`; None when it is a link, not a folder, or gone."""
    try:
        return open_beneath(parent, name, DIR_FLAGS, follow_links=False)
    except (EscapeError, NotADirectoryError, FileNotFoundError):
        return None


def _unlink_if_same(folder: int, name: str, held: int | None) -> None:
    """Remove `name` from the private folder, only if it is still the file held open (if any).

    The name is removed in the very folder the descriptor was opened on, so nothing outside
    the private store can be reached whatever is renamed meanwhile; the identity check keeps
    a file that was swapped in after the check (unverified) for the next sync.
    """
    try:
        if held is not None:
            now = os.stat(name, dir_fd=folder, follow_symlinks=False)
            was = os.fstat(held)
            if (now.st_dev, now.st_ino) != (was.st_dev, was.st_ino):
                return
        os.unlink(name, dir_fd=folder)
    except OSError:
        pass  # gone, or a folder in its place: it stays private, nothing of the user's is at stake


def _git_env(git_dir: Path, objects: Path) -> dict[str, str]:
    """Pin git to the user's git dir; its writes go to objects."""
    return {
        "GIT_DIR": str(git_dir),
        "GIT_OBJECT_DIRECTORY": str(objects),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": _alternate_entry(git_dir / "objects"),
    }


def _index_pack(src: int, git_dir: Path) -> str | None:
    """Index a pack (read from fd src) into the user's store with git's own checks; None on
    success, else why not.

    git writes the checked pack and its index into a quarantine folder inside the store;
    only a complete pack is linked into `objects/pack`, its index last, nothing replaced.
    The names are the ones git gave the checked pack, never the private store's.
    """
    store = git_dir / "objects"
    quarantine = Path(tempfile.mkdtemp(prefix="tmp_objdir-frogdesk-", dir=store))
    try:
        (quarantine / "pack").mkdir()
        done = run_git(
            git_dir,
            ["index-pack", "--stdin"],
            stdin=src,
            env=_git_env(git_dir, quarantine),
            ok_codes=range(256),
        )
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


@dataclass
class _Tally:
    """What one sync has done so far."""

    loose: int = 0
    present: int = 0
    packs: int = 0
    rejected: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _sync_folder(prefix: str, folder: int, store: int, tally: _Tally) -> None:
    """Move the loose objects of one private fan-out folder (a descriptor) into the store."""
    for name in sorted(os.listdir(folder)):
        algorithm = _HEX_REST.get(len(name))
        if algorithm is None or not _HEX.fullmatch(name):
            continue  # git's temporary files, or nothing git would read
        oid, label = prefix + name, f"{prefix}/{name}"
        if exists_at(store, f"{oid[:2]}/{oid[2:]}"):
            tally.present += 1  # never read, never written: the user's copy stays as it is
            _unlink_if_same(folder, name, None)
            continue
        try:
            src = _open_regular_at(folder, name)
        except ValueError as exc:
            tally.rejected.append(f"{label}: {exc}")
            continue
        except OSError as exc:
            tally.rejected.append(f"{label}: {exc.strerror or exc}")
            continue
        with opened(src):
            try:
                added = move_loose(src, store, oid, algorithm)
            except ValueError as exc:
                tally.rejected.append(f"{label}: {exc}")
                continue
            except OSError as exc:
                tally.errors.append(f"{label}: {exc}")
                continue
            if added:
                tally.loose += 1
            else:
                tally.present += 1
            _unlink_if_same(folder, name, src)


def _sync_loose(private: int, store: int, tally: _Tally) -> None:
    """Every fan-out folder of the private store, each opened once, never through a link."""
    for prefix in sorted(os.listdir(private)):
        if not _HEX_DIR.fullmatch(prefix):
            continue
        folder = _open_folder_at(private, prefix)
        if folder is None:
            continue  # a link (perhaps to the user's own fan-out folder), or not a folder
        with opened(folder):
            _sync_folder(prefix, folder, store, tally)
        with contextlib.suppress(OSError):
            os.rmdir(prefix, dir_fd=private)  # only when empty, and only a private folder


def _remove_pack(pack_dir: int, name: str, held: int) -> None:
    """Remove an indexed pack and its companions by name from the private pack folder."""
    stem = name.removesuffix(".pack")
    for suffix in _PACK_COMPANIONS:
        _unlink_if_same(pack_dir, stem + suffix, held if suffix == ".pack" else None)


def _sync_packs(private: int, git_dir: Path, tally: _Tally) -> None:
    """Index every pack of the private pack folder (opened once, never through a link)."""
    pack_dir = _open_folder_at(private, "pack")
    if pack_dir is None:
        return
    with opened(pack_dir):
        for name in sorted(os.listdir(pack_dir)):
            if not _PACK_NAME.fullmatch(name):
                continue
            try:
                src = _open_regular_at(pack_dir, name)
            except (OSError, ValueError) as exc:
                tally.rejected.append(f"pack/{name}: {exc}")
                continue
            with opened(src):
                try:
                    problem = _index_pack(src, git_dir)
                except (OSError, ValueError) as exc:
                    tally.rejected.append(f"pack/{name}: {exc}")
                    continue
                if problem is not None:
                    tally.rejected.append(f"pack/{name}: {problem}")
                    continue
                _remove_pack(pack_dir, name, src)
            tally.packs += 1


def sync_objects(route: ObjectRoute) -> SyncReport:
    """Move every sound object of the private store into the user's; never touch one already there.

    Call it only when no sandboxed command is running. What is moved is removed from the
    private store (sandboxed git still sees it, through the alternate). Corrupt files stay
    where they are and are reported; so do objects that could not be written. The private
    store is opened once, by its recorded path, and everything in it through descriptors:
    a process that outlived its command cannot redirect a read or a removal with links.
    """
    try:  # the recorded path; its last step must not be a link (EscapeError, an OSError)
        with opened(open_root(route.private.parent)) as parent:
            private = open_beneath(parent, route.private.name, DIR_FLAGS, follow_links=False)
    except (FileNotFoundError, NotADirectoryError):
        return SyncReport()
    tally = _Tally()
    with opened(private):
        with opened(open_root(route.store)) as store:
            _sync_loose(private, store, tally)
        _sync_packs(private, route.git_dir, tally)
    return SyncReport(
        loose=tally.loose,
        present=tally.present,
        packs=tally.packs,
        rejected=tuple(tally.rejected),
        errors=tuple(tally.errors),
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


def safe_sync(route: ObjectRoute) -> SyncReport:
    """sync_objects, with a failure to read the private store reported instead of raised."""
    try:
        return sync_objects(route)
    except OSError as exc:
        return SyncReport(errors=(str(exc),))
