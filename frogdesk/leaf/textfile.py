"""Reading and writing the tools' files within bounds: streamed reads, a size cap, atomic writes."""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from frogdesk.durable import atomic_write_at
from frogdesk.worktree.checkout import Worktree, session_private_dir
from frogdesk.worktree.record import read_record, sidecar_of

MAX_FILE_BYTES = 32 * 2**20
"""Files above this size are refused by Read and Edit (Leaf has no cap; this is the one
deliberate difference: a file near the size of RAM must not take FrogDesk down)."""
CHUNK = 1 << 16
WRITES_DIR = "writes"
"""The folder of a session's private dir where Write and Edit stage their temp files."""

# The characters after which str.splitlines() may end a line; "\r" may still pair with "\n".
_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


class FileTooLarge(ValueError):
    """A file above MAX_FILE_BYTES: Read and Edit refuse it (the observation says how to cope)."""


def check_size(display: str, size: int, tool: str) -> None:
    """Refuse a file above the cap, in Leaf's error style."""
    if size > MAX_FILE_BYTES:
        raise FileTooLarge(
            f"{display} is {size} bytes; {tool} refuses files over {MAX_FILE_BYTES} bytes "
            "(look at a part of it with Bash, e.g. head, tail or sed -n)"
        )


def iter_lines(handle: BinaryIO) -> Iterator[str]:
    """The lines of a file exactly as `data.decode('utf-8', 'replace').splitlines()`, streamed."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = ""
    while True:
        block = handle.read(CHUNK)
        pending += decoder.decode(block, final=not block)
        parts = pending.splitlines(keepends=True)
        if block and parts and (parts[-1][-1] not in _BREAKS or parts[-1][-1] == "\r"):
            pending = parts.pop()  # may continue (or be a "\r" that a "\n" completes)
        else:
            pending = ""
        for part in parts:
            yield part.splitlines()[0] if part else part
        if not block:
            return


def numbered_lines(display: str, handle: BinaryIO, offset: int, limit: int | None, cut: int) -> str:
    """Leaf's Read observation (`PATH\\n1. text...`), cut at `cut` characters, read in a stream.

    Only the lines shown are kept; the rest are counted, so the `[truncated K chars]` note
    says exactly what a whole read would have said.
    """
    kept: list[str] = [display, "\n"]
    size = len(display) + 1
    first = True
    for number, line in enumerate(iter_lines(handle), start=1):
        if number < offset:
            continue
        if limit is not None and number >= offset + limit:
            break
        piece = f"{number}. {line}" if first else f"\n{number}. {line}"
        first = False
        if size <= cut:
            kept.append(piece)
        size += len(piece)
    text = "".join(kept)
    if size <= cut:
        return text
    return f"{text[:cut]}\n[truncated {size - cut} chars]"


def replace_at(workdir: Path, parent: int, name: str, data: bytes) -> None:
    """Replace (or create) the entry `name` of the worktree folder open as `parent` with
    `data`: the old file stays intact unless the new one is complete.

    In a session worktree the temp file is staged in the session's private folder, which
    review never looks at: a crash mid-write cannot leave it among the model's changes.
    The rename lands in `parent` itself, so no name in the worktree is followed.
    """
    atomic_write_at(parent, name, data, temp_dir=private_writes_dir(workdir, parent))


def _worktree_holding(workdir: Path) -> Worktree | None:
    """The outermost FrogDesk worktree (one with its record beside it) that is `workdir` or
    holds it. Outermost, because the model can forge a record inside its worktree, never
    beside it; the workdir is the recorded path, so nothing below it is looked at."""
    found: Worktree | None = None
    for folder in (workdir, *workdir.parents):
        if not folder.name:
            continue  # the root has no record beside it
        sidecar = sidecar_of(folder)
        if os.path.islink(sidecar) or not os.path.isfile(sidecar):
            continue
        record = read_record(sidecar)
        if record is not None and record.path == folder:
            found = record
    return found


def _real_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def private_writes_dir(workdir: Path, parent: int) -> Path | None:
    """Where to stage a temp file for an entry of the folder open as `parent`: the session's
    private writes folder, made if needed; None outside a session worktree or on another
    file system (then beside the entry)."""
    worktree = _worktree_holding(Path(os.path.realpath(workdir)))
    if worktree is None:
        return None
    private = session_private_dir(worktree)
    folder = private / WRITES_DIR
    for part in (private, folder):
        try:
            os.mkdir(part, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return None
        if not _real_folder(part):
            return None  # never stage through a link
    try:
        same_disk = os.stat(folder).st_dev == os.fstat(parent).st_dev
    except OSError:
        return None
    return folder if same_disk else None  # a rename cannot cross file systems
