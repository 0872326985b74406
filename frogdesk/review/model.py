"""The diff model of a session: files, hunks with stable ids, and applying hunks to bytes."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from frogdesk.review.errors import HunkMismatch

HunkKind = Literal["text", "content", "rename", "mode"]
"""`text`: a git hunk of lines; `content`: the whole file (binary, symlink, empty, type change);
`rename`: the path change of a renamed file; `mode`: its permission change."""

FileStatus = Literal["added", "modified", "deleted", "renamed", "mode", "binary", "typechange"]

SYMLINK_MODE = "120000"


@dataclass(frozen=True)
class Hunk:
    """One reviewable change; a text hunk carries its base-side and new-side lines (exact bytes)."""

    id: str
    kind: HunkKind
    header: str
    old_start: int = 0
    old_count: int = 0
    new_start: int = 0
    new_count: int = 0
    old_lines: tuple[bytes, ...] = ()
    new_lines: tuple[bytes, ...] = ()
    added: int = 0
    """Lines this hunk adds (context excluded)."""
    removed: int = 0
    """Lines this hunk removes (context excluded)."""
    lines: tuple[bytes, ...] = ()
    """A text hunk's diff lines as git printed them: a tag (` `, `-`, `+`, `\\`) and the text."""

    def old_range(self) -> tuple[int, int]:
        """First and last base line this hunk covers (1-based, inclusive; an insert gives an empty range)."""
        return self.old_start, self.old_start + self.old_count - 1


@dataclass(frozen=True)
class FileChange:
    """One changed path between the base snapshot and the worktree."""

    status: FileStatus
    old_path: str | None
    new_path: str | None
    old_mode: str | None
    new_mode: str | None
    old_blob: str | None
    new_blob: str | None
    binary: bool
    hunks: tuple[Hunk, ...]

    @property
    def path(self) -> str:
        """The path shown to the user: the new path, or the old one for a deletion."""
        return self.new_path if self.new_path is not None else str(self.old_path)

    def text_hunks(self) -> tuple[Hunk, ...]:
        """The line hunks of this file."""
        return tuple(h for h in self.hunks if h.kind == "text")


@dataclass(frozen=True)
class SessionDiff:
    """The whole diff of a session's worktree against its base snapshot."""

    base_commit: str
    tree: str
    """The tree object of the worktree's state the diff was computed from."""
    files: tuple[FileChange, ...]
    ignored: tuple[str, ...] = ()
    """Untracked paths the session wrote that the user's repository ignores (a folder as
    `dir/`): not part of the diff, never applied; named so the review can say so."""

    def hunks(self) -> Iterator[tuple[FileChange, Hunk]]:
        """Every hunk with the file it belongs to, in display order."""
        for change in self.files:
            for hunk in change.hunks:
                yield change, hunk

    def hunk_ids(self) -> list[str]:
        """All hunk ids in display order."""
        return [h.id for _, h in self.hunks()]

    def find_hunk(self, hunk_id: str) -> tuple[FileChange, Hunk] | None:
        """The file and hunk with this id, if any."""
        for change, hunk in self.hunks():
            if hunk.id == hunk_id:
                return change, hunk
        return None

    def find_file(self, path: str) -> FileChange | None:
        """The change at this path (new or old path), if any."""
        for change in self.files:
            if path in (change.new_path, change.old_path):
                return change
        return None


def hunk_id(path: str, kind: str, parts: Sequence[bytes], occurrence: int) -> str:
    """A stable id: it depends on the path and the hunk's content, not on line numbers."""
    digest = hashlib.sha1(usedforsecurity=False)
    digest.update(path.encode("utf-8", "surrogateescape") + b"\0" + kind.encode() + b"\0")
    for part in parts:
        digest.update(len(part).to_bytes(8, "big") + part)
    digest.update(str(occurrence).encode())
    return digest.hexdigest()[:12]


def split_lines(data: bytes) -> list[bytes]:
    """Lines as git sees them: split after each LF, CR kept, a last line may lack its LF."""
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def apply_text_hunks(
    base: bytes, hunks: Sequence[Hunk], new_sides: Mapping[str, Sequence[bytes]] | None = None
) -> bytes:
    """Base content with the given text hunks applied; new_sides overrides a hunk's new lines."""
    lines = split_lines(base)
    out: list[bytes] = []
    pos = 0
    for hunk in sorted(hunks, key=lambda h: h.old_start):
        start = hunk.old_start - 1 if hunk.old_count else hunk.old_start
        if start < pos or lines[start : start + hunk.old_count] != list(hunk.old_lines):
            raise HunkMismatch(f"hunk {hunk.id} ({hunk.header}) does not match its base")
        out.extend(lines[pos:start])
        replacement = (
            hunk.new_lines if new_sides is None else new_sides.get(hunk.id, hunk.new_lines)
        )
        out.extend(replacement)
        pos = start + hunk.old_count
    out.extend(lines[pos:])
    return b"".join(out)
