"""Undo: put back the exact prior bytes and mode of every file an apply touched, as a transaction."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from frogdesk.review.commit import plan_uncommit
from frogdesk.review.errors import UnsafePath
from frogdesk.review.fsops import read_state
from frogdesk.review.journal import new_journal
from frogdesk.review.records import (
    APPLIES_DIR,
    ApplyRecord,
    RecordedFile,
    apply_time,
    blobs_dir,
    count_files,
    drop_record,
    load_records,
    new_record_id,
    record_dir,
    save_record,
    update_record,
)
from frogdesk.review.refmove import HistoryOutcome, RefMove
from frogdesk.review.target import FileState, StateRef, ref_of
from frogdesk.review.transaction import Outcome, finish_undo, plan_journal, run_transaction

__all__ = [
    "APPLIES_DIR",
    "ApplyRecord",
    "RecordedFile",
    "StateRef",
    "UndoResult",
    "drop_record",
    "latest_record",
    "load_records",
    "new_record_id",
    "record_dir",
    "save_record",
    "undo_apply",
    "update_record",
]


@dataclass
class UndoResult:
    """The outcome of an undo: restored paths, or the paths that made it refuse."""

    record: ApplyRecord
    restored: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    history: HistoryOutcome | None = None
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
        when = apply_time(self.record.created_at)
        lines = [f"undid the apply of {when} ({count_files(len(self.restored))})"]
        lines += [f"  {p}" for p in self.restored]
        if self.history is not None:
            lines.append(self.history.message)
        return "\n".join(lines)


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

    Each file may be in its after state (the apply's result) or already in its before
    state (an apply or undo a crash interrupted); any other state refuses the whole undo.
    A committed apply also takes its commit back (HEAD, its branch and the files' index
    entries) when HEAD still is that commit; otherwise the commit stays and the result says
    why. Files and commit go back in one journaled transaction: a crash is finished later.
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
        if ref_of(state) not in (item.after, item.before):
            result.refused.append(item.path)
    if result.refused:
        return result
    move = _plan_history(root, record)
    if isinstance(move, HistoryOutcome):
        result.history, move = move, None
    writes = _prior_states(session_dir, record, current)
    if writes or move is not None:
        prior = {p: current[p] for p in writes}
        journal = new_journal("undo", record.session_id, root, record.id)
        plan_journal(journal, root, prior, writes)
        journal.history = move

        def finish(outcome: Outcome) -> None:
            finish_undo(session_dir, record)

        done = run_transaction(session_dir, journal, prior, writes, on_done=finish)
        result.history = done.history or result.history
    else:
        finish_undo(session_dir, record)
    result.restored = [item.path for item in record.files]
    return result


def _plan_history(root: Path, record: ApplyRecord) -> RefMove | HistoryOutcome | None:
    """How the apply's commit is taken back, why it stays, or None without a commit."""
    if not record.commit:
        return None
    if record.index_before is None:
        return HistoryOutcome(
            False, f"commit {record.commit[:12]} stays: its apply did not record the index"
        )
    return plan_uncommit(root, record.commit, record.index_before)


def _prior_states(
    session_dir: Path, record: ApplyRecord, current: dict[str, FileState | None]
) -> dict[str, FileState | None]:
    """The recorded prior state of every file not already back in it."""
    blobs = blobs_dir(session_dir, record.id)
    writes: dict[str, FileState | None] = {}
    for item in record.files:
        if ref_of(current[item.path]) == item.before:
            continue
        before = item.before
        writes[item.path] = (
            FileState((blobs / before.sha256).read_bytes(), before.mode)
            if before is not None
            else None
        )
    return writes
