"""Leaf's five tools (Read, Write, Edit, Glob, Bash) with their exact observation strings."""

from __future__ import annotations

import contextlib
import errno
import math
import os
import stat
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from frogdesk.errors import EscapeError
from frogdesk.leaf.approval import CommandGate
from frogdesk.leaf.errors import OutsideWorkdirError, ShellMissingError
from frogdesk.leaf.globwalk import glob_beneath
from frogdesk.leaf.paths import (
    Located,
    ResolvedPath,
    WorkRoot,
    check_writable,
    escapes,
    in_git,
    is_git_name,
    locate,
    opened_root,
    resolve,
)
from frogdesk.leaf.textfile import (
    MAX_FILE_BYTES,
    FileTooLarge,
    check_size,
    numbered_lines,
    replace_at,
)
from frogdesk.sandbox.process import dropped_chars
from frogdesk.sandbox.shells.protocol import Shell, ShellResult

READ_LIMIT = 20_000
"""Characters of a Read observation before it is cut."""
BASH_LIMIT = 30_000
"""Characters of a Bash observation before it is cut."""
GLOB_LIMIT = 1_000
"""Paths a Glob observation lists before `... K more files`."""
BASH_TIMEOUT = 120.0
"""Default Bash timeout in seconds."""
BASH_MIN_TIMEOUT = 0.1
"""Leaf's minimum Bash timeout in seconds: smaller (and negative) ones are raised to it."""

MAX_RETRIES = 8
"""Times a file is located again when its name became a link between the look and the open."""

TRUE_STRINGS = frozenset({"1", "true", "yes", "on"})


def truncate(text: str, limit: int, unseen: int = 0) -> str:
    """Cut `text` at `limit` characters, saying how many were dropped.

    `unseen` counts characters that belong after `text` but were never kept (Bash output
    past the shell's cap); they are counted as Leaf, which keeps everything, counts them.
    """
    if len(text) + unseen <= limit:
        return text
    return f"{text[:limit]}\n[truncated {len(text) + unseen - limit} chars]"


def as_bool(value: Any) -> bool:
    """Leaf's reading of replace_all: true/false, or the strings 1/true/yes/on."""
    if isinstance(value, str):
        return value.strip().lower() in TRUE_STRINGS
    return bool(value)


def _text(args: Mapping[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _required(args: Mapping[str, Any], key: str) -> str:
    value = _text(args, key)
    if value is None:
        raise ValueError(f"{key} is required")
    return value


def _file_path(args: Mapping[str, Any]) -> str:
    value = _text(args, "file_path")
    if value is None:
        value = _text(args, "path")
    if not value:
        raise ValueError("file_path is required")
    return value


def _optional_int(args: Mapping[str, Any], key: str) -> int | None:
    value = args.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return int(value)
    return int(str(value).strip())


def _not_regular(target: ResolvedPath) -> ValueError:
    return ValueError(f"{target.display} is not a regular file")


def _check_kind(target: ResolvedPath, mode: int) -> None:
    """Refuse what is not a regular file; directories keep open()'s IsADirectoryError."""
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(target.path))
    if not stat.S_ISREG(mode):
        raise _not_regular(target)


@contextlib.contextmanager
def _named(target: ResolvedPath, raw: str) -> Iterator[None]:
    """Errors name the path as the model gave it, made absolute (as Leaf's do), not the
    component or temp file the descriptor walk was at."""
    try:
        yield
    except OutsideWorkdirError:
        raise
    except EscapeError as exc:  # from beneath: a link out, found by the kernel
        raise escapes(raw) from exc
    except OSError as exc:
        if exc.errno is None or exc.filename == str(target.path):
            raise
        raise type(exc)(exc.errno, exc.strerror, str(target.path)) from exc


def _locate_file(
    root: WorkRoot, target: ResolvedPath, raw: str, *, write: bool, make_dirs: bool = False
) -> Located:
    """The folder and name of a file to read or replace, links inside followed, kind checked.

    A FIFO, socket or device in the workdir (one `mkfifo` away for the model) would make
    a plain open() or read() wait forever; such entries are refused by what lstat saw
    here, and one swapped in afterwards by the descriptor that opens it.
    """
    located = locate(root, target.rel, raw, make_dirs=make_dirs, refuse_git=write)
    try:
        if not located.name:
            _check_kind(target, stat.S_IFDIR)
        if write:
            check_writable(root, located, raw)
        if located.mode is not None:
            _check_kind(target, located.mode)
    except BaseException:
        os.close(located.parent)
        raise
    return located


def _open_located(located: Located, target: ResolvedPath) -> int:
    """Open the located entry for reading, never blocking and never following a link."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(located.name, flags, dir_fd=located.parent)
    try:
        _check_kind(target, os.fstat(fd).st_mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_regular(
    root: WorkRoot, target: ResolvedPath, raw: str, *, write: bool
) -> tuple[Located, int]:
    """Locate and open a regular file: its folder (for a write back) and a read descriptor.

    A name that became a link between the look and the open (ELOOP from O_NOFOLLOW) is
    resolved again, a bounded number of times: a racer can make the call fail, never
    make it open what the link leads to.
    """
    for _ in range(MAX_RETRIES):
        located = _locate_file(root, target, raw, write=write)
        try:
            if located.mode is None:
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(target.path))
            return located, _open_located(located, target)
        except OSError as exc:
            os.close(located.parent)
            if exc.errno != errno.ELOOP:
                raise
        except BaseException:
            os.close(located.parent)
            raise
    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(target.path))


def read_regular(
    root: WorkRoot, target: ResolvedPath, raw: str, tool: str
) -> tuple[Located, bytes]:
    """The whole content of a regular file inside the workdir, refused above the size cap,
    and the folder it was found in (open; the caller closes it)."""
    located, fd = _open_regular(root, target, raw, write=tool != "Read")
    try:
        with open(fd, "rb") as handle:
            check_size(target.display, os.fstat(handle.fileno()).st_size, tool)
            return located, handle.read()
    except BaseException:
        os.close(located.parent)
        raise


def write_regular(workdir: Path, located: Located, target: ResolvedPath, text: str) -> None:
    """Replace (or create) a regular file's content with `text` as UTF-8, newlines as given.

    The file is replaced atomically in the folder it was located in, so text that cannot
    be written (a full disk) leaves the old file as it was.
    """
    replace_at(workdir, located.parent, located.name, text.encode("utf-8"))


def _writable(workdir: Path, raw: str) -> ResolvedPath:
    """The path of a Write or Edit, refused at once when the model names a `.git` in it
    (the links on the way are judged while the path is walked)."""
    target = resolve(workdir, raw)
    if any(is_git_name(part) for part in PurePosixPath(target.display).parts):
        raise in_git(raw)
    return target


def _utf8_size(text: str) -> int:
    # surrogatepass: a lone surrogate is refused when written, not while sizing
    return len(text.encode("utf-8", "surrogatepass"))


def _check_result_size(target: ResolvedPath, size: int, replaced: int, old: str, new: str) -> None:
    """Refuse an Edit whose result would be over the size cap, before it is built.

    The cap on the file read does not bound the result: replace_all of a one-character
    old_string by a long new_string multiplies the file (30 MiB became 900 MiB).
    """
    result = size + replaced * (_utf8_size(new) - _utf8_size(old))
    if result > MAX_FILE_BYTES:
        noun = "replacement" if replaced == 1 else "replacements"
        raise FileTooLarge(
            f"{target.display} would be {result} bytes after {replaced} {noun}; Edit refuses "
            f"files over {MAX_FILE_BYTES} bytes (replace fewer occurrences or use a shorter "
            "new_string)"
        )


class LeafTools:
    """The tool implementations over one workdir; each returns the observation or raises."""

    def __init__(self, workdir: Path, shell: Shell | None, gate: CommandGate | None = None) -> None:
        self.workdir = workdir
        self.shell = shell
        self.gate = gate
        """Asked before each Bash command at every sandbox level; None runs it unasked."""

    def read(self, args: Mapping[str, Any]) -> str:
        """Read: the displayed path, then `N. text` lines, streamed; over the size cap refused.

        As in Leaf, bytes that are not UTF-8 (binary files too) are replaced, and with no
        line selected the observation is the path and a newline.
        """
        raw = _file_path(args)
        target = resolve(self.workdir, raw)
        start = max(_optional_int(args, "offset") or 1, 1)
        limit = _optional_int(args, "limit")
        with opened_root(self.workdir) as root, _named(target, raw):
            located, fd = _open_regular(root, target, raw, write=False)
            os.close(located.parent)
            with open(fd, "rb") as handle:
                check_size(target.display, os.fstat(handle.fileno()).st_size, "Read")
                return numbered_lines(
                    target.display,
                    handle,
                    start,
                    limit if limit and limit > 0 else None,
                    READ_LIMIT,
                )

    def write(self, args: Mapping[str, Any]) -> str:
        """Write: create parents, write UTF-8, `Wrote PATH (N bytes).` with N characters."""
        raw = _file_path(args)
        target = _writable(self.workdir, raw)
        content = _required(args, "content")
        content.encode("utf-8")  # text that cannot be written fails before any folder is made
        with opened_root(self.workdir) as root, _named(target, raw):
            located = _locate_file(root, target, raw, write=True, make_dirs=True)
            try:
                write_regular(self.workdir, located, target, content)
            finally:
                os.close(located.parent)
        return f"Wrote {target.display} ({len(content)} bytes)."

    def edit(self, args: Mapping[str, Any]) -> str:
        """Edit: replace one exact match (or every match with replace_all)."""
        raw = _file_path(args)
        target = _writable(self.workdir, raw)
        old = _text(args, "old_string") or ""
        new = _text(args, "new_string")
        if not old:
            raise ValueError("old_string must be non-empty")
        if new is None:
            raise ValueError("new_string is required")
        replace_all = as_bool(args.get("replace_all", False))
        with opened_root(self.workdir) as root, _named(target, raw):
            located, data = read_regular(root, target, raw, "Edit")
            try:
                text = data.decode("utf-8")
                count = text.count(old)
                if count == 0:
                    raise ValueError("old_string was not found")
                if count > 1 and not replace_all:
                    raise ValueError(
                        f"old_string matched {count} times; set replace_all=true or use a more specific old_string"
                    )
                replaced = count if replace_all else 1
                _check_result_size(target, len(data), replaced, old, new)
                text = text.replace(old, new) if replace_all else text.replace(old, new, 1)
                write_regular(self.workdir, located, target, text)
            finally:
                os.close(located.parent)
        noun = "replacement" if replaced == 1 else "replacements"
        return f"Edited {target.display} ({replaced} {noun})."

    def glob(self, args: Mapping[str, Any], cancel: threading.Event | None = None) -> str:
        """Glob: sorted files matching the pattern, at most 1,000 listed.

        A walk that runs out of budget (a tree of symlinked folders) or is cancelled lists
        what it found and says that it stopped; Leaf's walk would not end at all.
        """
        pattern = _required(args, "pattern")
        where = _text(args, "path") or "."
        base = resolve(self.workdir, where)
        if os.path.isabs(pattern):
            anchored = resolve(self.workdir, pattern)
            pattern = anchored.display
            base = resolve(self.workdir, ".")
        if ".." in pattern.split("/"):
            raise OutsideWorkdirError(f"{pattern} is outside the repository workdir")
        with opened_root(self.workdir) as root:
            walked = glob_beneath(root, base.rel, pattern, where, cancel=cancel)
        found = walked.files
        prefix = "" if base.display == "." else base.display + "/"
        if prefix or "./" in pattern or pattern.startswith("."):
            shown = sorted(os.path.normpath(prefix + name) for name in found)
        else:
            shown = found  # already sorted and normal
        advice = "narrow the pattern or the path"
        if not shown:
            if walked.stopped:
                return f"No files matched before Glob stopped {walked.stopped} ({advice})."
            return "No files matched."
        out = "\n".join(shown[:GLOB_LIMIT])
        if len(shown) > GLOB_LIMIT:
            out += f"\n... {len(shown) - GLOB_LIMIT} more files"
        if walked.stopped:
            out += f"\n... Glob stopped {walked.stopped}: more files may match ({advice})"
        return out

    def bash(self, args: Mapping[str, Any], cancel: threading.Event | None = None) -> str:
        """Bash: run through the session shell; exit code, stdout and stderr, or the timeout."""
        return self.bash_result(args, cancel)[0]

    def bash_result(
        self, args: Mapping[str, Any], cancel: threading.Event | None = None
    ) -> tuple[str, ShellResult]:
        """Bash's observation and what the command did (exit code, stopped, timed out)."""
        command = _required(args, "command")
        if not command.strip():
            raise ValueError("command is required")
        timeout = bash_timeout(args)
        if self.shell is None:
            raise ShellMissingError("no shell is available for Bash")
        if self.gate is not None:
            self.gate.check(command)  # a refusal is the observation; nothing has run
        result = self.shell.run(command, self.workdir, timeout, cancel)
        streams = f"STDOUT:\n{result.stdout}\nSTDERR:\n{result.stderr}"
        if result.timed_out:
            head = f"Timed out after {result.limit or timeout:.1f}s"
        else:
            head = f"Exit code: {result.exit_code}"
        return truncate(f"{head}\n{streams}", BASH_LIMIT, dropped_chars(result)), result


def bash_timeout(args: Mapping[str, Any]) -> float:
    """Seconds for a Bash call: `timeout_ms`, else `timeout` (milliseconds above 1000), else 120.

    As in Leaf, 0 counts as not given (120 s) and anything else is at least 0.1 s.
    """
    raw_ms = args.get("timeout_ms")
    if raw_ms is not None and raw_ms != "":
        seconds = float(raw_ms) / 1000.0
    else:
        raw = args.get("timeout")
        if raw is None or raw == "":
            return BASH_TIMEOUT
        seconds = float(raw)
        if seconds > 1000:
            seconds /= 1000.0
    if not math.isfinite(seconds):
        # inf or nan would mean no timeout at all; the shell clamps finite ones to its maximum
        raise ValueError("timeout must be a finite number")
    if seconds == 0:
        return BASH_TIMEOUT
    return max(seconds, BASH_MIN_TIMEOUT)
