"""What a review showed: each file's and hunk's content digest, so apply writes only that."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from frogdesk.durable import atomic_write_text
from frogdesk.errors import FrogDeskError
from frogdesk.review.model import FileChange, Hunk, SessionDiff

REVIEWED_FILE = "reviewed.json"
STALE_NOTE = "changed since you reviewed it; review again"
"""The line apply prints for a file whose change is not the one the review showed."""


def _digest(parts: Iterable[bytes]) -> str:
    """SHA-256 over length-prefixed parts: no two part lists share a digest by concatenation."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


def _text(value: str | None) -> bytes:
    """A field as bytes; None differs from every string (an absent side is not an empty name)."""
    return b"\x00none" if value is None else b"s" + value.encode("utf-8", "surrogateescape")


def _file_parts(change: FileChange) -> list[bytes]:
    fields = (change.status, change.old_path, change.new_path, change.old_mode)
    more = (change.new_mode, change.old_blob, change.new_blob)
    return [_text(v) for v in (*fields, *more)]


def hunk_digest(change: FileChange, hunk: Hunk) -> str:
    """A full-strength digest of what applying this hunk writes (the 12-hex id is only a name).

    A text hunk writes its own lines over its base-side range of the base blob, so its
    digest covers those and the file's base side, not the new blob: a change elsewhere
    in the file leaves it as reviewed. A whole-file, rename or mode hunk writes from the
    file's new side, so every blob id and mode is part of it.
    """
    if hunk.kind == "text":  # not the header: its new-side line numbers move with the rest
        sides = (change.old_path, change.new_path, change.old_mode, change.new_mode)
        parts = [_text(v) for v in (*sides, change.old_blob, hunk.kind)]
    else:
        parts = [*_file_parts(change), _text(hunk.kind), _text(hunk.header)]
    parts += [b"%d" % n for n in (hunk.old_start, hunk.old_count)]
    parts += [b"old", *hunk.old_lines, b"new", *hunk.new_lines]
    return _digest(parts)


def file_digest(change: FileChange) -> str:
    """A digest of one file's whole change: its paths, modes, blobs and every hunk."""
    return _digest([*_file_parts(change), *(hunk_digest(change, h).encode() for h in change.hunks)])


@dataclass(frozen=True)
class ReviewedFile:
    """One file as the review showed it."""

    digest: str
    hunks: dict[str, str] = field(default_factory=dict)
    """Hunk id -> hunk_digest."""


@dataclass(frozen=True)
class ReviewedRecord:
    """A session's diff as its latest review showed it, by file path."""

    base_commit: str
    tree: str
    files: dict[str, ReviewedFile]

    @classmethod
    def of(cls, diff: SessionDiff) -> ReviewedRecord:
        """The record of showing this diff."""
        files = {
            c.path: ReviewedFile(file_digest(c), {h.id: hunk_digest(c, h) for h in c.hunks})
            for c in diff.files
        }
        return cls(diff.base_commit, diff.tree, files)

    def to_json(self) -> str:
        """Serialize as JSON."""
        files = {p: {"digest": f.digest, "hunks": f.hunks} for p, f in self.files.items()}
        payload = {"base_commit": self.base_commit, "tree": self.tree, "files": files}
        return json.dumps(payload, indent=2, ensure_ascii=True)

    @classmethod
    def from_json(cls, text: str) -> ReviewedRecord:
        """Parse a record written by to_json; ValueError naming what is wrong."""
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("the file holds no JSON object")
        base, tree, raw = data.get("base_commit"), data.get("tree"), data.get("files")
        if not isinstance(base, str) or not isinstance(tree, str) or not isinstance(raw, dict):
            raise ValueError("base_commit, tree and files are missing or of the wrong type")
        files: dict[str, ReviewedFile] = {}
        for path, entry in raw.items():
            digest = entry.get("digest") if isinstance(entry, dict) else None
            hunks = entry.get("hunks") if isinstance(entry, dict) else None
            if not isinstance(digest, str) or not isinstance(hunks, dict):
                raise ValueError(f"the entry of {path!r} is damaged")
            if not all(isinstance(v, str) for v in hunks.values()):
                raise ValueError(f"a hunk digest of {path!r} is not text")
            files[path] = ReviewedFile(digest, dict(hunks))
        return cls(base, tree, files)

    def stale_files(self, diff: SessionDiff, paths: Collection[str] | None = None) -> list[str]:
        """Paths whose change is not the one shown: changed, new, or (for all paths) gone.

        `paths` limits the check to those files (as the diff names them); None checks the
        whole diff, and then a file the review showed that the diff no longer has counts too.
        """
        stale: list[str] = []
        if diff.base_commit != self.base_commit:
            return sorted({c.path for c in diff.files} | set(self.files))
        for change in diff.files:
            if paths is not None and change.path not in paths:
                continue
            shown = self.files.get(change.path)
            if shown is None or shown.digest != file_digest(change):
                stale.append(change.path)
        if paths is None:
            current = {c.path for c in diff.files}
            stale += sorted(p for p in self.files if p not in current)
        return stale

    def stale_hunks(self, diff: SessionDiff, hunk_ids: Collection[str]) -> list[str]:
        """Paths holding a chosen hunk the review did not show with this exact content, and
        of a chosen id the review showed that the diff no longer has."""
        stale: list[str] = []
        present = set(diff.hunk_ids())
        for path, shown_file in self.files.items():
            if any(h in shown_file.hunks and h not in present for h in hunk_ids):
                stale.append(path)
        for change in diff.files:
            shown = self.files.get(change.path)
            for hunk in change.hunks:
                if hunk.id not in hunk_ids:
                    continue
                if shown is None or shown.hunks.get(hunk.id) != hunk_digest(change, hunk):
                    stale.append(change.path)
                    break
        return list(dict.fromkeys(stale))


def load_reviewed(session_dir: Path) -> ReviewedRecord | None:
    """What the session's latest review showed, or None when it was never reviewed."""
    path = session_dir / REVIEWED_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        return ReviewedRecord.from_json(text)
    except ValueError as exc:  # bad JSON and undecodable bytes included
        raise FrogDeskError(
            f"{path} is damaged ({exc}); review the session again to replace it"
        ) from None


def save_reviewed(session_dir: Path, diff: SessionDiff) -> ReviewedRecord:
    """Record that the user was shown this diff (atomically; replaces an older review)."""
    record = ReviewedRecord.of(diff)
    session_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(session_dir / REVIEWED_FILE, record.to_json())
    return record
