"""Undo records: the exact prior bytes and mode of every file an apply touched, and undo itself."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from frogdesk.review.commit import Uncommitted, uncommit
from frogdesk.review.fsops import UnsafePath, read_state, write_states
from frogdesk.review.target import FileState

APPLIES_DIR = "applies"


@dataclass(frozen=True)
class StateRef:
    """A file state by content hash and mode."""

    sha256: str
    mode: str

    @classmethod
    def of(cls, state: FileState) -> StateRef:
        """The reference of a state."""
        return cls(hashlib.sha256(state.content).hexdigest(), state.mode)


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

    def to_json(self) -> str:
        """Serialize as JSON."""
        return json.dumps(asdict(self), indent=2, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> ApplyRecord:
        """Parse a record written by to_json."""
        data = json.loads(text)

        def ref(value: dict[str, str] | None) -> StateRef | None:
            return StateRef(**value) if value is not None else None

        files = [
            RecordedFile(f["path"], ref(f["before"]), ref(f["after"])) for f in data.pop("files")
        ]
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(files=files, **known)


@dataclass
class UndoResult:
    """The outcome of an undo: restored paths, or the paths that made it refuse."""

    record: ApplyRecord
    restored: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    history: Uncommitted | None = None
    """With a committed apply: whether its commit was taken back, or why not."""

    @property
    def ok(self) -> bool:
        """True when every file was restored."""
        return not self.refused

    def report(self) -> str:
        """A human-readable summary."""
        if self.refused:
            lines = ["undo refused: these files changed since the apply; nothing was restored:"]
            lines += [f"  {p}" for p in self.refused]
            return "\n".join(lines)
        lines = [f"restored {len(self.restored)} file(s) from apply {self.record.id}"]
        lines += [f"  {p}" for p in self.restored]
        if self.history is not None:
            lines.append(self.history.message)
        return "\n".join(lines)


def new_record_id() -> str:
    """A sortable, unique apply id."""
    return f"{time.time_ns():020d}-{os.getpid()}"


def record_dir(session_dir: Path, record_id: str) -> Path:
    """Where one apply's record lives."""
    return session_dir / APPLIES_DIR / record_id


def save_record(
    session_dir: Path,
    record: ApplyRecord,
    before: Mapping[str, FileState | None],
) -> Path:
    """Write the record and the prior contents, atomically (a folder renamed into place)."""
    applies = session_dir / APPLIES_DIR
    applies.mkdir(parents=True, exist_ok=True)
    tmp = applies / f".tmp-{record.id}"
    blobs = tmp / "blobs"
    blobs.mkdir(parents=True)
    for state in before.values():
        if state is not None:
            (blobs / StateRef.of(state).sha256).write_bytes(state.content)
    (tmp / "record.json").write_text(record.to_json(), encoding="utf-8")
    final = record_dir(session_dir, record.id)
    os.replace(tmp, final)
    return final


def update_record(session_dir: Path, record: ApplyRecord) -> None:
    """Rewrite a stored record's JSON (after a commit or an undo)."""
    path = record_dir(session_dir, record.id) / "record.json"
    tmp = path.with_name("record.json.tmp")
    tmp.write_text(record.to_json(), encoding="utf-8")
    os.replace(tmp, path)


def drop_record(session_dir: Path, record_id: str) -> None:
    """Remove a record whose apply was rolled back."""
    shutil.rmtree(record_dir(session_dir, record_id), ignore_errors=True)


def load_records(session_dir: Path) -> list[ApplyRecord]:
    """The session's apply records, oldest first."""
    applies = session_dir / APPLIES_DIR
    if not applies.is_dir():
        return []
    records = []
    for entry in sorted(applies.iterdir()):
        path = entry / "record.json"
        if not entry.name.startswith(".") and path.is_file():
            records.append(ApplyRecord.from_json(path.read_text(encoding="utf-8")))
    return records


def latest_record(sessions_root: Path, session_id: str | None) -> tuple[Path, ApplyRecord] | None:
    """The newest not-yet-undone apply of one session, or of any session when session_id is None."""
    dirs = [sessions_root / session_id] if session_id else sorted(sessions_root.glob("*"))
    best: tuple[Path, ApplyRecord] | None = None
    for session_dir in dirs:
        for record in load_records(session_dir):
            if not record.undone and (best is None or record.id > best[1].id):
                best = (session_dir, record)
    return best


def undo_apply(session_dir: Path, record: ApplyRecord) -> UndoResult:
    """Restore the files of one apply exactly, or refuse if any was changed since.

    A committed apply also takes its commit back (HEAD, its branch and the files' index
    entries) when HEAD still is that commit; otherwise the commit stays and the result says why.
    """
    result = UndoResult(record)
    root = Path(record.repo)
    current: dict[str, FileState | None] = {}
    for item in record.files:
        try:
            state = read_state(root, item.path)
        except UnsafePath:
            result.refused.append(item.path)
            continue
        current[item.path] = state
        if (StateRef.of(state) if state is not None else None) != item.after:
            result.refused.append(item.path)
    if result.refused:
        return result
    if record.commit:
        result.history = (
            uncommit(root, record.commit, record.index_before)
            if record.index_before is not None
            else Uncommitted(
                False, f"commit {record.commit[:12]} stays: its apply did not record the index"
            )
        )
    blobs = record_dir(session_dir, record.id) / "blobs"
    writes: dict[str, FileState | None] = {}
    for item in record.files:
        before = item.before
        writes[item.path] = (
            FileState((blobs / before.sha256).read_bytes(), before.mode)
            if before is not None
            else None
        )
    write_states(root, writes, current)
    for rel in sorted(record.created_dirs, key=len, reverse=True):
        try:
            (root / rel).rmdir()
        except OSError:
            continue
    record.undone = True
    update_record(session_dir, record)
    result.restored = [item.path for item in record.files]
    return result
