"""Reading and writing the tools' files within bounds: streamed reads, a size cap, atomic writes."""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from frogdesk.durable import atomic_write_bytes

MAX_FILE_BYTES = 32 * 2**20
"""Files above this size are refused by Read and Edit (Leaf has no cap; this is the one
deliberate difference: a file near the size of RAM must not take FrogDesk down)."""
CHUNK = 1 << 16

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


def replace_atomically(path: Path, data: bytes) -> None:
    """Replace (or create) the file behind `path` with `data`: the old file stays intact
    unless the new one is complete; a symlink inside the workdir keeps pointing at it."""
    atomic_write_bytes(Path(os.path.realpath(path)), data)
