"""Resolving the model's paths inside the session worktree on descriptors, refusing anything
that leads out, in the same calls that then use them (a name checked, then opened by name,
is a race a process left running in the worktree wins by swapping a folder for a link)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from frogdesk.beneath import DIR_FLAGS, MAX_LINKS, open_root, relative_to_root
from frogdesk.leaf.errors import OutsideWorkdirError

MAX_DEPTH = 512
"""Folders one resolution may hold open at once (a path deeper than this is refused)."""


@dataclass(frozen=True)
class ResolvedPath:
    """A path the tools may touch, by name only: where it is meant to be and how it is shown."""

    path: Path
    """Absolute path inside the workdir, as given (for messages; never opened by name)."""
    display: str
    """The path relative to the workdir, with `/` separators (`.` for the workdir itself)."""
    rel: str
    """The same path for resolving beneath the workdir ("" for the workdir itself)."""


@dataclass(frozen=True)
class WorkRoot:
    """The workdir opened once: its descriptor and the absolute names that lead to it."""

    fd: int
    prefixes: tuple[tuple[str, ...], ...]
    """The workdir's path as given and as the kernel names it, as components: an absolute
    link whose target starts with one of them points inside and is followed beneath it."""


@dataclass
class Located:
    """The folder holding a resolved path (an open descriptor the caller closes) and the
    entry's name in it, which was not a link when looked at. An empty name means the path
    is that folder itself (it ended in `..` or in a link to a folder)."""

    parent: int
    name: str
    mode: int | None
    """The entry's st_mode when looked at (lstat); None when it does not exist."""
    names: list[str] = field(default_factory=list)
    """The physical names from the workdir down to `parent`, as the walk went."""

    @property
    def physical(self) -> str:
        """The entry's path below the workdir with no link in it ("" for the workdir)."""
        return "/".join([*self.names, self.name] if self.name else self.names)


def is_within(path: str, root: str) -> bool:
    """True when the real path `path` is `root` or below it (both already made real)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def resolve(workdir: Path, raw: str) -> ResolvedPath:
    """Place `raw` in the workdir by its name alone; OutsideWorkdirError when it climbs out.

    Relative paths resolve against the workdir; absolute paths are accepted only inside
    it; `..` may not climb above it. Links are not looked at here: `locate` follows them
    on descriptors, refusing any that leads out, when the path is used.
    """
    if not raw:
        raise ValueError("path is empty")
    if "\x00" in raw:
        raise ValueError("path contains a NUL character")
    root = os.path.abspath(workdir)
    real_root = os.path.realpath(root)
    candidate = raw if os.path.isabs(raw) else os.path.join(root, raw)
    lexical = os.path.normpath(candidate)
    if not is_within(lexical, root) and not is_within(lexical, real_root):
        raise OutsideWorkdirError(f"{raw} is outside the repository workdir")
    base = root if is_within(lexical, root) else real_root
    rel = os.path.relpath(lexical, base)
    display = PurePosixPath(*Path(rel).parts).as_posix() if rel != "." else "."
    return ResolvedPath(Path(lexical), display, "" if display == "." else display)


def escapes(raw: str) -> OutsideWorkdirError:
    """The refusal of a path whose links lead out of the workdir (the model's text)."""
    return OutsideWorkdirError(f"{raw} leads outside the repository workdir through a symlink")


def in_git(raw: str) -> OutsideWorkdirError:
    """The refusal of a write inside `.git` (the model's text)."""
    return OutsideWorkdirError(f"{raw} is inside .git, which tools may not modify")


def is_git_name(name: str) -> bool:
    """`.git` in any case: on a case-insensitive file system `.GIT` is the same entry."""
    return name.lower() == ".git"


def _components(path: str) -> list[str]:
    return [p for p in path.split("/") if p not in ("", ".")]


@contextlib.contextmanager
def opened_root(workdir: Path) -> Iterator[WorkRoot]:
    """The workdir (a recorded path, trusted) opened for one tool call."""
    fd = open_root(workdir)
    try:
        given = tuple(_components(os.path.abspath(workdir)))
        try:
            kernel = tuple(_components(os.readlink(f"/proc/self/fd/{fd}")))
        except OSError:
            kernel = tuple(_components(os.path.realpath(workdir)))
        yield WorkRoot(fd, (given, kernel) if given != kernel else (given,))
    finally:
        os.close(fd)


def _inside(root: WorkRoot, target: str, raw: str) -> list[str]:
    """An absolute link's target as components below the workdir, or the refusal."""
    parts = _components(target)
    for prefix in root.prefixes:
        if tuple(parts[: len(prefix)]) == prefix:
            return parts[len(prefix) :]
    raise escapes(raw)


def _too_many_links(raw: str) -> OSError:
    return OSError(errno.ELOOP, os.strerror(errno.ELOOP), raw)


def locate(
    root: WorkRoot,
    rel: str,
    raw: str,
    *,
    follow_final: bool = True,
    make_dirs: bool = False,
    refuse_git: bool = False,
) -> Located:
    """Resolve `rel` beneath the workdir one component at a time, on descriptors.

    Every step opens a single name in a folder already held, without following links;
    a link is read from that folder (readlinkat) and its target resolved the same way, so
    a link leading out (relative `..` above the workdir, an absolute path elsewhere) is
    refused by what it says at that instant, and a name swapped in between opens nothing
    outside. Links inside are followed, the last one too with `follow_final`. With
    `make_dirs` missing folders are made (as `mkdir -p`); with `refuse_git` no step may
    pass through a `.git`, whether the model named it or a link did.
    """
    pending = _components(rel)
    stack = [os.dup(root.fd)]
    names: list[str] = []
    steps = 0  # links followed and retries after a name changed under the walk
    try:
        while pending:
            name = pending.pop(0)
            if name == "..":
                if len(stack) == 1:
                    raise escapes(raw)
                os.close(stack.pop())
                names.pop()
                continue
            if refuse_git and is_git_name(name):
                raise in_git(raw)
            last = not pending
            here = stack[-1]
            if last:
                try:
                    mode: int | None = os.stat(name, dir_fd=here, follow_symlinks=False).st_mode
                except FileNotFoundError:
                    mode = None
                if mode is None or not stat.S_ISLNK(mode) or not follow_final:
                    return Located(stack.pop(), name, mode, names)
            else:
                if len(stack) > MAX_DEPTH:
                    raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), raw)
                try:
                    stack.append(os.open(name, DIR_FLAGS | os.O_NOFOLLOW, dir_fd=here))
                    names.append(name)
                    continue
                except FileNotFoundError:
                    if not make_dirs:
                        raise
                    steps += 1
                    if steps > MAX_LINKS:
                        raise
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, 0o777, dir_fd=here)
                    pending.insert(0, name)
                    continue
                except NotADirectoryError:
                    # O_DIRECTORY|O_NOFOLLOW says ENOTDIR for a link too: look which it is.
                    kind = os.stat(name, dir_fd=here, follow_symlinks=False).st_mode
                    if stat.S_ISDIR(kind):  # a link a moment ago, a folder again: retry
                        steps += 1
                        if steps > MAX_LINKS:
                            raise _too_many_links(raw) from None
                        pending.insert(0, name)
                        continue
                    if not stat.S_ISLNK(kind):
                        raise
            steps += 1
            if steps > MAX_LINKS:
                raise _too_many_links(raw)
            try:
                target = os.readlink(name, dir_fd=here)
            except OSError as exc:
                if exc.errno not in (errno.EINVAL, errno.ENOENT):
                    raise
                pending.insert(0, name)  # no longer a link: look again
                continue
            if target.startswith("/"):
                pending = _inside(root, target, raw) + pending
                for fd in stack[1:]:
                    os.close(fd)
                del stack[1:]
                names.clear()
            else:
                pending = _components(target) + pending
        # The path ended in `..` or in a link to a folder: it is the folder on top itself.
        return Located(stack.pop(), "", stat.S_IFDIR, names)
    finally:
        for fd in stack:
            os.close(fd)


def check_writable(root: WorkRoot, located: Located, raw: str) -> None:
    """Refuse a write inside `.git` by where the kernel says the opened folder is now.

    The walk refused every `.git` it passed; this asks the descriptor itself, so a folder
    renamed under the walk is judged by where it is, not by the names it was reached by.
    """
    if not located.name:
        return  # the folder itself: writing it fails as a directory
    try:
        where = relative_to_root(root.fd, located.parent)
    except OSError:
        where = PurePosixPath(*located.names)  # no /proc: the names the walk went by
    if where is None:
        raise escapes(raw)
    if any(is_git_name(part) for part in (*where.parts, located.name)):
        raise in_git(raw)
