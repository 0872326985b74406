"""Apply records: the exact prior bytes and mode of every file an apply touched, kept durably."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from frogdesk.durable import atomic_write_text, fsync_dir, write_new
from frogdesk.errors import FrogDeskError
from frogdesk.review.target import FileState, StateRef
from frogdesk.typedjson import build

APPLIES_DIR = "applies"


@dataclass
class RecordedFile:
    """One path an apply changed: its state before and after (None: absent)."""

    path: str
    before: StateRef | None
    after: StateRef | None


@dataclass
class ApplyRecord:
    """What one apply changed, enough to put every byte back."""

    id: str
    session_id: str
    repo: str
    created_at: float
    files: list[RecordedFile]
    commit: str | None = None
    undone: bool = False
    created_dirs: list[str] = field(default_factory=list)
    index_before: dict[str, list[str]] | None = None
    """With a commit: the index entries of the files before the apply (`git ls-files -s`)."""
    commit_skipped: str = ""
    """With --commit but no commit made (HEAD moved meanwhile): why, as the user was told."""

    def to_json(self) -> str:
        """Serialize as JSON."""
        return json.dumps(asdict(self), indent=2)  # ASCII: a name that is not UTF-8 keeps its bytes

    @classmethod
    def from_json(cls, text: str) -> ApplyRecord:
        """Parse a record written by to_json; a damaged one raises ValueError naming what."""
        return build(cls, json.loads(text))


def count_files(n: int) -> str:
    """ "1 file", "3 files"."""
    return "1 file" if n == 1 else f"{n} files"


def apply_time(at: float, now: float | None = None) -> str:
    """When an apply happened, as a person names it: "14:02" today, "2026-12-01 14:02" before."""
    when, today = time.localtime(at), time.localtime(time.time() if now is None else now)
    same_day = when[:3] == today[:3]
    return time.strftime("%H:%M" if same_day else "%Y-%m-%d %H:%M", when)


def new_record_id() -> str:
    """A sortable, unique apply id."""
    return f"{time.time_ns():020d}-{os.getpid()}"


def record_dir(session_dir: Path, record_id: str) -> Path:
    """Where one apply's record lives."""
    return session_dir / APPLIES_DIR / record_id


def blobs_dir(session_dir: Path, record_id: str) -> Path:
    """Where one apply's prior contents live, by sha256."""
    return record_dir(session_dir, record_id) / "blobs"


def save_record(
    session_dir: Path,
    record: ApplyRecord,
    before: Mapping[str, FileState | None],
) -> Path:
    """Write the record and the prior contents durably (a folder fsynced, then renamed in place)."""
    applies = session_dir / APPLIES_DIR
    applies.mkdir(parents=True, exist_ok=True)
    tmp = applies / f".tmp-{record.id}"
    shutil.rmtree(tmp, ignore_errors=True)  # left by a crash of this very apply's first try
    blobs = tmp / "blobs"
    blobs.mkdir(parents=True)
    for state in before.values():
        if state is not None:
            name = blobs / StateRef.of(state).sha256
            if not name.exists():
                write_new(name, state.content, 0o600)
    write_new(tmp / "record.json", record.to_json().encode("utf-8"), 0o600)
    fsync_dir(blobs)
    fsync_dir(tmp)
    final = record_dir(session_dir, record.id)
    os.replace(tmp, final)
    fsync_dir(applies)
    return final


def update_record(session_dir: Path, record: ApplyRecord) -> None:
    """Rewrite a stored record's JSON durably (after a commit or an undo)."""
    atomic_write_text(record_dir(session_dir, record.id) / "record.json", record.to_json())


def drop_record(session_dir: Path, record_id: str) -> None:
    """Remove a record whose apply was rolled back (and its half-written folder, if any)."""
    shutil.rmtree(record_dir(session_dir, record_id), ignore_errors=True)
    shutil.rmtree(session_dir / APPLIES_DIR / f".tmp-{record_id}", ignore_errors=True)


def load_record(session_dir: Path, record_id: str) -> ApplyRecord | None:
    """One stored record, or None when it is not there."""
    path = record_dir(session_dir, record_id) / "record.json"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return _parse(path, text)


def load_records(session_dir: Path) -> list[ApplyRecord]:
    """The session's apply records, oldest first."""
    applies = session_dir / APPLIES_DIR
    if not applies.is_dir():
        return []
    records = []
    for entry in sorted(applies.iterdir()):
        path = entry / "record.json"
        if not entry.name.startswith(".") and path.is_file():
            records.append(_parse(path, path.read_text(encoding="utf-8")))
    return records


def _parse(path: Path, text: str) -> ApplyRecord:
    """The record in `text`, read from `path`; a damaged one is a FrogDeskError naming it."""
    try:
        return ApplyRecord.from_json(text)
    except ValueError as exc:
        raise FrogDeskError(
            f"{path} is damaged ({exc}); the apply it records cannot be undone from it"
        ) from None


@dataclass(frozen=True)
class ApplyState:
    """Whether a session's changes reached the repository: its applies, and how many were undone."""

    applies: int = 0
    undone: int = 0
    damaged: bool = False
    """A record could not be read (its apply may or may not stand)."""

    def words(self) -> str:
        """The state in a word or two, for the sessions lists."""
        if self.damaged:
            return "apply record damaged"
        live = self.applies - self.undone
        if live > 1:
            return f"applied {live}×"
        if live == 1:
            return "applied"
        return "undone" if self.applies else "not applied"

    def as_json(self) -> dict[str, object]:
        """The state for `sessions list --json`."""
        return {
            "state": self.words(),
            "applies": self.applies,
            "undone": self.undone,
            "damaged": self.damaged,
        }


def apply_state(session_dir: Path) -> ApplyState:
    """How many times a session was applied and undone, from its apply records (never raises
    for a damaged or unreadable record: that is part of the state)."""
    try:
        records = load_records(session_dir)
    except (FrogDeskError, OSError):
        return ApplyState(damaged=True)
    return ApplyState(len(records), sum(1 for r in records if r.undone))
