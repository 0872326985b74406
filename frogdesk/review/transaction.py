"""Apply and undo as transactions: journal, stage, rename; a crash is finished or reverted later."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from frogdesk.durable import fsync_dir
from frogdesk.review.errors import TransactionBusy, Unrecoverable, UnsafePath
from frogdesk.review.faults import FaultPoints
from frogdesk.review.fsops import (
    WriteReport,
    check_path,
    ensure_dirs,
    file_mode,
    prune_dirs,
    read_state,
    stage_file,
)
from frogdesk.review.journal import (
    Journal,
    JournalEntry,
    load_journal,
    pending_sessions,
    remove_journal,
    save_journal,
    session_lock,
)
from frogdesk.review.model import SYMLINK_MODE
from frogdesk.review.records import (
    ApplyRecord,
    drop_record,
    load_record,
    update_record,
)
from frogdesk.review.refmove import HistoryOutcome, advance
from frogdesk.review.sources import Source, blob_source, read_exact, staged_source
from frogdesk.review.target import FileState, StateRef, ref_of


@dataclass
class Recovered:
    """What recovery did with one unfinished journal."""

    session_id: str
    kind: str
    direction: Literal["finished", "rolled back"]
    changed: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    """Files in neither state (changed by someone after the crash): not touched."""
    history: HistoryOutcome | None = None
    """With a commit or its undo in the transaction: what became of it."""

    def describe(self) -> str:
        """One line for the user."""
        what = f"an interrupted {self.kind} of session {self.session_id}"
        line = f"{self.direction} {what} ({len(self.changed)} file(s) written)"
        if self.history is not None:
            line += f"; {self.history.message}"
        if self.left:
            line += f"; left as they are, changed since: {', '.join(self.left)}"
        return line


@dataclass
class Outcome:
    """What a transaction did: the folders it made or removed, and its ref move, if any."""

    report: WriteReport
    history: HistoryOutcome | None = None


def plan_journal(
    journal: Journal,
    root: Path,
    before: Mapping[str, FileState | None],
    after: Mapping[str, FileState | None],
) -> None:
    """Fill the journal's entries and the folders the after state needs; nothing is written."""
    dirs: list[str] = []
    for i, (rel, state) in enumerate(after.items()):
        path = check_path(root, rel)
        staged = f"{i:06d}" if state is not None else ""
        perms = file_mode(path, state.mode) if state and state.mode != SYMLINK_MODE else 0
        journal.files.append(JournalEntry(rel, ref_of(before[rel]), ref_of(state), staged, perms))
        if state is None:
            continue
        parts = PurePosixPath(rel).parts[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            if folder not in dirs and not (root / folder).is_dir():
                dirs.append(folder)
    journal.new_dirs = dirs


def run_transaction(
    session_dir: Path | None,
    journal: Journal,
    before: Mapping[str, FileState | None],
    after: Mapping[str, FileState | None],
    *,
    on_journaled: Callable[[], None] = lambda: None,
    on_done: Callable[[Outcome], None] = lambda outcome: None,
    faults: FaultPoints | None = None,
) -> Outcome:
    """Bring every journaled path from `before` to `after`, all or nothing, crash-safe.

    The journal goes to session_dir first (without one, a failure is still reverted, but a
    crash is not), then `on_journaled` runs (the apply saves its undo record there), new
    contents are staged and fsynced under the repository's git folder, renamed into place,
    the folders fsynced, the journal's ref move is made (a commit, or taking one back),
    `on_done` runs (records are brought up to date), and only then is the journal removed.
    """
    faults = faults or FaultPoints.from_env()
    root = Path(journal.repo)
    staging = Path(journal.staging)
    lock = session_lock(session_dir, wait=False) if session_dir else contextlib.nullcontext(True)
    with lock as held:
        if not held:
            raise TransactionBusy(f"session {journal.session_id} is being applied or undone")
        for entry in journal.files:
            if ref_of(read_state(root, entry.path)) != entry.before:
                raise UnsafePath(
                    f"{entry.path} changed while the {journal.kind} was being prepared; "
                    "nothing was written"
                )
        if session_dir is not None:
            save_journal(session_dir, journal)
            faults.step("journal written")
        try:
            on_journaled()
            faults.step("record written")
            staging.mkdir(parents=True, exist_ok=True)
            for entry in journal.files:
                state = after[entry.path]
                if state is not None:
                    stage_file(staging / entry.staged, state, entry.perms)
                    faults.step(f"staged {entry.path}")
            fsync_dir(staging)
            faults.step("staging synced")
            outcome = Outcome(_forward(journal, staged_source(journal), faults))
            outcome.history = _move_history(journal, faults)
        except BaseException:
            memory = {StateRef.of(s): s for s in before.values() if s is not None}
            _back(journal, memory.get, FaultPoints())
            _take_back_history(journal)
            _clean_staging(journal)
            if session_dir is not None:
                remove_journal(session_dir)
            raise
        on_done(outcome)
        faults.step("records updated")
        _clean_staging(journal)
        if session_dir is not None:
            remove_journal(session_dir)
        faults.step("journal removed")
        return outcome


def _move_history(journal: Journal, faults: FaultPoints) -> HistoryOutcome | None:
    """Make the journal's ref move (after the files: a commit names their new contents)."""
    if journal.history is None:
        return None
    moved = advance(Path(journal.repo), journal.history)
    faults.step("history moved")
    return moved


def _take_back_history(journal: Journal) -> None:
    """Undo the journal's ref move where it was made (a no-op where it was not)."""
    if journal.history is not None:
        advance(Path(journal.repo), journal.history.reversed())


def _state_now(root: Path, rel: str) -> StateRef | Literal["other"] | None:
    try:
        return ref_of(read_state(root, rel))
    except UnsafePath:
        return "other"


def _put(root: Path, entry: JournalEntry, state: FileState | None, tmp: Path, perms: int) -> None:
    """Move one path to `state` (None: remove it) with permission bits `perms` (0: derived
    from the file's own), from the staged file `tmp` when it is complete."""
    path = check_path(root, entry.path)
    if state is None:
        path.unlink(missing_ok=True)
        return
    report = WriteReport()
    ensure_dirs(root, entry.path, report)
    perms = perms or file_mode(path, state.mode)
    if tmp.is_symlink() or tmp.exists():
        if read_exact(tmp, StateRef.of(state), perms) is not None:
            os.replace(tmp, path)
            return
        tmp.unlink()  # torn by a crash while it was staged
    tmp.parent.mkdir(parents=True, exist_ok=True)
    stage_file(tmp, state, perms)
    os.replace(tmp, path)


def _forward(journal: Journal, source: Source, faults: FaultPoints) -> WriteReport:
    """Bring every path still in its before state to its after state."""
    root = Path(journal.repo)
    staging = Path(journal.staging)
    report = WriteReport(created_dirs=[d for d in journal.new_dirs])
    parents: set[Path] = set()
    for entry in journal.files:
        if _state_now(root, entry.path) != entry.before or entry.before == entry.after:
            continue
        state = source(entry.after) if entry.after is not None else None
        if entry.after is not None and state is None:
            raise Unrecoverable(f"the new content of {entry.path} is gone")
        tmp = staging / entry.staged if entry.staged else staging / "none"
        _put(root, entry, state, tmp, entry.perms)
        parents.add((root / entry.path).parent)
        faults.step(f"renamed {entry.path}")
    for folder in sorted(parents, key=lambda p: len(p.parts), reverse=True):
        fsync_dir(folder)
    for entry in journal.files:
        if entry.after is None:
            prune_dirs(root, entry.path, report)
    fsync_dir(root)
    faults.step("folders synced")
    return report


def _back(journal: Journal, source: Source, faults: FaultPoints) -> list[str]:
    """Bring every path already in its after state back to its before state."""
    root = Path(journal.repo)
    staging = Path(journal.staging)
    changed: list[str] = []
    for i, entry in enumerate(journal.files):
        if _state_now(root, entry.path) != entry.after or entry.before == entry.after:
            continue
        state = source(entry.before) if entry.before is not None else None
        if entry.before is not None and state is None:
            raise Unrecoverable(f"the prior content of {entry.path} is gone")
        _put(root, entry, state, staging / f"back-{i:06d}", 0)
        fsync_dir((root / entry.path).parent)
        changed.append(entry.path)
        faults.step(f"reverted {entry.path}")
    for folder in reversed(journal.new_dirs):
        with contextlib.suppress(OSError):
            (root / folder).rmdir()
    return changed


def _clean_staging(journal: Journal) -> None:
    staging = Path(journal.staging)
    shutil.rmtree(staging, ignore_errors=True)
    with contextlib.suppress(OSError):
        staging.parent.rmdir()  # the shared staging folder, when no other transaction uses it


def finish_apply(session_dir: Path, journal: Journal, outcome: Outcome) -> None:
    """An apply went all the way: its record lists the folders it made (undo removes them)
    and its commit with the index entries it replaced (undo takes it back), or why there
    is none."""
    record = load_record(session_dir, journal.record_id)
    if record is None:
        return
    root = Path(journal.repo)
    record.created_dirs = [d for d in outcome.report.created_dirs if (root / d).is_dir()]
    move, moved = journal.history, outcome.history
    if move is not None and moved is not None:
        if moved.done:
            record.commit, record.index_before = move.new, move.index_old
        else:
            record.commit_skipped = moved.message
    update_record(session_dir, record)


def finish_undo(session_dir: Path, record: ApplyRecord) -> None:
    """An undo went all the way: the folders its apply made go, the record says undone."""
    root = Path(record.repo)
    for rel in sorted(record.created_dirs, key=len, reverse=True):
        with contextlib.suppress(OSError):
            (root / rel).rmdir()
    record.undone = True
    update_record(session_dir, record)


def recover(session_dir: Path, faults: FaultPoints | None = None) -> Recovered | None:
    """Finish or revert the session's unfinished transaction, if any (and no live process owns it).

    An apply is finished when every content it still needs is complete (staged or in the
    record), else reverted from the record's prior contents; an undo is always finished
    (its contents are the record's). A journaled ref move (a commit, or taking one back)
    goes the same way as the files, from wherever the crash left it. Files found in neither
    state are left alone and named.
    """
    faults = faults or FaultPoints.from_env()
    with session_lock(session_dir, wait=False) as held:
        journal = load_journal(session_dir) if held else None
        if journal is None:
            return None
        root = Path(journal.repo)
        left = [
            e.path for e in journal.files if _state_now(root, e.path) not in (e.before, e.after)
        ]
        source = blob_source(session_dir, journal.record_id, staged_source(journal))
        pending = [
            e for e in journal.files if e.path not in left and _state_now(root, e.path) != e.after
        ]
        complete = all(e.after is None or source(e.after) is not None for e in pending)
        done = Recovered(journal.session_id, journal.kind, "finished", left=left)
        if complete:
            done.changed = [e.path for e in pending if e.before != e.after]
            outcome = Outcome(_forward(journal, source, faults))
            done.history = outcome.history = _move_history(journal, faults)
            if journal.kind == "apply":
                finish_apply(session_dir, journal, outcome)
            else:
                record = load_record(session_dir, journal.record_id)
                if record is not None:
                    finish_undo(session_dir, record)
        else:
            done.direction = "rolled back"
            done.changed = _back(journal, source, faults)
            _take_back_history(journal)
            if journal.kind == "apply":
                drop_record(session_dir, journal.record_id)
        _clean_staging(journal)
        remove_journal(session_dir)
        return done


def recover_all(sessions_root: Path) -> list[Recovered]:
    """Recover every session's unfinished transaction (run at the start of each command)."""
    out: list[Recovered] = []
    for session_dir in pending_sessions(sessions_root):
        found = recover(session_dir)
        if found is not None:
            out.append(found)
    return out
