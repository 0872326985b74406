"""Apply approved hunks onto the user's working tree: 3-way, atomic, recorded for undo."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from frogdesk.errors import FrogDeskError
from frogdesk.inert import inert_line
from frogdesk.review.commit import plan_commit
from frogdesk.review.errors import UnknownHunk, UnsafePath
from frogdesk.review.fsops import read_state
from frogdesk.review.gitcmd import read_blobs
from frogdesk.review.journal import Journal, load_journal, new_journal
from frogdesk.review.merge import merge_states
from frogdesk.review.model import FileChange, Hunk, SessionDiff
from frogdesk.review.records import (
    ApplyRecord,
    RecordedFile,
    apply_time,
    count_files,
    drop_record,
    new_record_id,
    save_record,
)
from frogdesk.review.refmove import HistoryOutcome
from frogdesk.review.show import USER_CHANGED_NOTE
from frogdesk.review.target import FilePlan, FileState, plan_file, ref_of
from frogdesk.review.transaction import Outcome, finish_apply, plan_journal, run_transaction


@dataclass(frozen=True)
class Conflict:
    """A refused change: the file, the hunks, their base line range, and why."""

    path: str
    hunk_ids: tuple[str, ...]
    lines: tuple[int, int] | None
    reason: str
    user_changed: bool = False
    """The repository watcher saw the user change this file while the session ran."""

    def describe(self) -> str:
        """One line for the user."""
        where = f" lines {self.lines[0]}-{self.lines[1]}" if self.lines else ""
        note = f"; {USER_CHANGED_NOTE}" if self.user_changed else ""
        return f"{self.path}{where}: {self.reason}{note} (hunk {', '.join(self.hunk_ids)})"


@dataclass
class ApplyResult:
    """What an apply did: every approved change landed (applied) or nothing did (conflicts)."""

    applied: bool
    conflicts: list[Conflict] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    record_id: str | None = None
    commit: str | None = None
    history: HistoryOutcome | None = None
    """With --commit: whether the commit was made, in a line for the user."""
    applied_at: float = field(default_factory=time.time)
    """When the files were written (the undo record's time): the report names the apply by it."""

    def report(self) -> str:
        """A human-readable summary."""
        if not self.applied:
            lines = ["apply refused; nothing was written:"]
            lines += [f"  {c.describe()}" for c in self.conflicts]
            return "\n".join(lines)
        lines = [f"applied {count_files(len(self.written))} at {apply_time(self.applied_at)}"]
        lines += [f"  {inert_line(p)}" for p in self.written]  # one line per name, newline or not
        if self.history is not None:
            lines.append(self.history.message)
        elif self.commit:
            lines.append(f"committed as {self.commit[:12]}")
        return "\n".join(lines)


@dataclass
class _Plan:
    writes: dict[str, FileState | None] = field(default_factory=dict)
    expected: dict[str, FileState | None] = field(default_factory=dict)
    conflicts: list[Conflict] = field(default_factory=list)


def apply_hunks(
    repo_root: Path,
    worktree: Path,
    diff: SessionDiff,
    approved: Collection[str],
    *,
    edits: Mapping[str, Sequence[bytes]] | None = None,
    session_dir: Path | None = None,
    session_id: str = "",
    commit_message: str | None = None,
    user_changed: Collection[str] = (),
) -> ApplyResult:
    """Write the approved hunks (and only those) to repo_root, merging with the user's edits.

    If any approved hunk conflicts with the user's current files, nothing is written and
    the conflicts are returned; those in `user_changed` (paths the user changed while the
    session ran) say so. With session_dir, the prior state is recorded for undo before
    anything changes. Blobs are read from the worktree's object store.
    """
    known = set(diff.hunk_ids())
    missing = [h for h in approved if h not in known]
    if missing:
        raise UnknownHunk(", ".join(missing))
    plan = _plan(repo_root.resolve(), worktree, diff, set(approved), edits or {})
    if plan.conflicts:
        flagged = set(user_changed)
        conflicts = [
            dataclasses.replace(c, user_changed=_touches(diff, c.path, flagged))
            for c in plan.conflicts
        ]
        return ApplyResult(applied=False, conflicts=conflicts)
    writes = {p: s for p, s in plan.writes.items() if s != plan.expected[p]}
    if not writes:
        return ApplyResult(applied=True)
    root = repo_root.resolve()
    record: ApplyRecord | None = None
    before = {p: plan.expected[p] for p in writes}
    if session_dir is not None:
        record = ApplyRecord(
            id=new_record_id(),
            session_id=session_id,
            repo=str(root),
            created_at=time.time(),
            files=[RecordedFile(p, ref_of(before[p]), ref_of(s)) for p, s in writes.items()],
        )
    journal = new_journal("apply", session_id, root, record.id if record else "")
    plan_journal(journal, root, before, writes)
    if commit_message:
        # Made as an object now, put on HEAD by the transaction: a crash finishes or reverts it too.
        journal.history = plan_commit(root, writes, commit_message)

    def save() -> None:
        if record is not None and session_dir is not None:
            save_record(session_dir, record, before)

    def finish(outcome: Outcome) -> None:
        if record is not None and session_dir is not None:
            finish_apply(session_dir, journal, outcome)

    try:
        outcome = run_transaction(
            session_dir, journal, before, writes, on_journaled=save, on_done=finish
        )
    except BaseException:
        # A journal still there (its rollback failed too) needs the record to recover from.
        if record is not None and session_dir is not None and not _pending(session_dir, journal):
            drop_record(session_dir, record.id)
        raise
    moved = outcome.history
    return ApplyResult(
        applied=True,
        written=list(writes),
        record_id=record.id if record else None,
        applied_at=record.created_at if record else time.time(),
        commit=journal.history.new if journal.history and moved and moved.done else None,
        history=moved,
    )


def _pending(session_dir: Path, journal: Journal) -> bool:
    """True when this transaction's journal is still on disk, for the next command to recover."""
    try:
        found = load_journal(session_dir)
    except FrogDeskError:
        return True  # damaged: keep everything for the user to look at
    return found is not None and found.id == journal.id


def _touches(diff: SessionDiff, path: str, flagged: set[str]) -> bool:
    """True when the file at `path` (either side of a rename) is among the flagged paths."""
    if path in flagged:
        return True
    change = diff.find_file(path)
    return change is not None and bool({change.old_path, change.new_path} & flagged)


def _plan(
    root: Path,
    worktree: Path,
    diff: SessionDiff,
    approved: set[str],
    edits: Mapping[str, Sequence[bytes]],
) -> _Plan:
    """Merge each file's approved state with the user's current one; no writes."""
    changes = [c for c in diff.files if any(h.id in approved for h in c.hunks)]
    shas = [s for c in changes for s in (c.old_blob, c.new_blob) if s is not None]
    blobs = read_blobs(worktree, shas)
    plan = _Plan()
    for change in changes:
        base = blobs.get(change.old_blob) if change.old_blob else None
        new = blobs.get(change.new_blob) if change.new_blob else None
        file_plan = plan_file(change, approved, edits, base, new)
        if file_plan is not None:
            _plan_one(root, change, file_plan, approved, edits, base, new, plan)
    return plan


def _plan_one(
    root: Path,
    change: FileChange,
    fp: FilePlan,
    approved: set[str],
    edits: Mapping[str, Sequence[bytes]],
    base: bytes | None,
    new: bytes | None,
    plan: _Plan,
) -> None:
    chosen = tuple(h.id for h in change.hunks if h.id in approved)
    try:
        ours = read_state(root, fp.src)
        other = read_state(root, fp.dst) if fp.dst != fp.src else None
    except UnsafePath as exc:
        plan.conflicts.append(Conflict(change.path, chosen, None, str(exc)))
        return
    outcome = merge_states(fp.base, ours, fp.target)
    if outcome.conflict:
        plan.conflicts.extend(
            _blame(change, fp, approved, edits, base, new, ours, outcome.conflict)
        )
        return
    if fp.dst != fp.src and other is not None and other != outcome.state:
        plan.conflicts.append(
            Conflict(fp.dst, chosen, None, "the rename's target exists in your tree")
        )
        return
    for path in {fp.src, fp.dst}:
        if path in plan.writes:
            plan.conflicts.append(Conflict(path, chosen, None, "two changes write this path"))
            return
    plan.expected[fp.src] = ours
    if fp.dst != fp.src:
        plan.expected[fp.dst] = other
        plan.writes[fp.src] = None
    plan.writes[fp.dst] = outcome.state


def _blame(
    change: FileChange,
    fp: FilePlan,
    approved: set[str],
    edits: Mapping[str, Sequence[bytes]],
    base: bytes | None,
    new: bytes | None,
    ours: FileState | None,
    reason: str,
) -> list[Conflict]:
    """Which approved hunks conflict: each text hunk is merged on its own to find out."""
    text = [h for h in change.hunks if h.id in approved and h.kind == "text"]
    others = tuple(h.id for h in change.hunks if h.id in approved and h.kind != "text")
    found: list[Conflict] = []
    if ours is not None and fp.base is not None and fp.target is not None and len(text) > 1:
        for hunk in text:
            alone = plan_file(change, {hunk.id}, edits, base, new)
            if alone is not None and merge_states(fp.base, ours, alone.target).conflict:
                found.append(_conflict(change.path, hunk, reason))
    if not found:
        found = [_conflict(change.path, h, reason) for h in text]
        if others or not text:
            found.append(Conflict(change.path, others, None, reason))
    return found


def _conflict(path: str, hunk: Hunk, reason: str) -> Conflict:
    return Conflict(path, (hunk.id,), hunk.old_range() if hunk.old_count else None, reason)
