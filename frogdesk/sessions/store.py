"""The session store: one folder per session with session.json and an append-only transcript."""

from __future__ import annotations

import errno
import json
import os
import secrets
import shutil
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from frogdesk.durable import atomic_write_bytes, atomic_write_text, sweep_tree, write_new
from frogdesk.engine.chat import Message
from frogdesk.leaf.records import (
    StepRecord,
    dumps,
    message_from_dict,
    message_to_dict,
    step_from_dict,
    step_to_dict,
)
from frogdesk.sessions.errors import SessionDamagedError, SessionNotFoundError, StoreWriteError
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.staging import StagedSession, staging_path

RECORD_FILE = "session.json"
TRANSCRIPT_FILE = "transcript.jsonl"


DAMAGED_LINES_FILE = "transcript.damaged.jsonl"


@dataclass(frozen=True)
class DamagedSession:
    """A session folder whose files cannot be read: which file, why, and what to do."""

    id: str
    path: Path
    reason: str
    advice: str = ""
    """What to do, where the file's kind does not say it (see way_forward)."""

    def way_forward(self) -> str:
        """What the user can do about it."""
        if self.advice:
            return self.advice
        if self.path.name == TRANSCRIPT_FILE:
            return (
                f"`frogdesk sessions repair {self.id}` sets the unreadable lines aside "
                f"in {DAMAGED_LINES_FILE} and keeps the rest"
            )
        return f"restore {self.path.name}, or move {self.path.parent} aside to drop the session"

    def describe(self) -> str:
        """One line for the user."""
        return f"session {self.id} is damaged: {self.path}: {self.reason}; {self.way_forward()}"


FULL_DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})
"""Write failures that mean "the disk cannot take more", not a bug: full, over quota, read-only."""


def is_full_disk(exc: BaseException) -> bool:
    """True for an OSError that means the disk cannot take more (full, quota, read-only)."""
    return isinstance(exc, OSError) and exc.errno in FULL_DISK_ERRNOS


@dataclass(frozen=True)
class FollowUp:
    """A user message added between steps (feedback after a review), before step `before_step`."""

    before_step: int
    message: Message


@dataclass
class Transcript:
    """A session's transcript read back: the opening messages, the steps and later user messages."""

    messages: list[Message] = field(default_factory=list)
    """The messages before the first step (system, task)."""
    steps: list[StepRecord] = field(default_factory=list)
    followups: list[FollowUp] = field(default_factory=list)
    """User messages sent after some steps, in the order they were sent."""
    raw_texts: dict[int, str] = field(default_factory=dict)
    """Each step's reply exactly as the model generated it, by step index (where recorded)."""
    raw_tokens: dict[int, tuple[int, ...]] = field(default_factory=dict)
    """The sampled token ids of those replies, by step index (llama backend only)."""
    end: dict[str, Any] | None = None
    """The last `end` line (how a run ended), if any."""
    dropped_tail: bool = False
    """True when a half-written last line (a crash mid-write) was ignored."""

    @property
    def next_step(self) -> int:
        """The index the next step will have."""
        return self.steps[-1].step + 1 if self.steps else 0

    def ended_with_answer(self) -> bool:
        """True when the last step is a final answer (a whole reply without tool calls)
        and no user message came after it."""
        if not self.steps:
            return False
        if any(f.before_step >= self.next_step for f in self.followups):
            return False
        last = self.steps[-1]
        return last.finish != "length" and not last.assistant.tool_calls and not last.observations

    def conversation(self) -> list[Message]:
        """The full message list the loop continues from.

        Each step's assistant message carries its raw reply (`Message.raw`) where one was
        recorded, so the llama backend re-reads the tokens the model generated.
        """
        out = list(self.messages)
        for step in self.steps:
            out.extend(f.message for f in self.followups if f.before_step == step.step)
            raw = self.raw_texts.get(step.step, "")
            tokens = self.raw_tokens.get(step.step, ())
            out.append(
                replace(step.assistant, raw=raw, raw_tokens=tokens) if raw else step.assistant
            )
            out.extend(step.tool_messages())
        out.extend(f.message for f in self.followups if f.before_step >= self.next_step)
        return out


def _read_record(folder: Path) -> SessionRecord | DamagedSession:
    """A folder's record, or what is wrong with it."""
    path = folder / RECORD_FILE
    try:
        record = SessionRecord.from_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return DamagedSession(folder.name, path, "the file is missing")
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        return DamagedSession(folder.name, path, f"unreadable ({type(exc).__name__}: {exc})")
    if record.id != folder.name:
        # every path of a session derives from its id: one naming another folder is damage
        return DamagedSession(folder.name, path, f"its id {record.id!r} is not its folder's name")
    return record


def _scan(root: Path) -> list[SessionRecord | DamagedSession]:
    """Every session folder's record, or what is wrong with it."""
    if not root.is_dir():
        return []
    # hidden folders are sessions still being made (see staging), never damaged ones
    return [_read_record(f) for f in root.iterdir() if f.is_dir() and not f.name.startswith(".")]


def _parse_entry(line: str) -> tuple[dict[str, Any], StepRecord | Message | FollowUp | None]:
    """A transcript line: its JSON object and what it records (None for an "end" line, and
    for a kind a newer version may write). A line that is no entry raises (ValueError,
    KeyError, TypeError or AttributeError)."""
    entry = json.loads(line)
    kind = entry["kind"]
    if kind == "message":
        return entry, message_from_dict(entry["message"])
    if kind == "step":
        return entry, step_from_dict(entry["step"])
    if kind == "followup":
        before = entry["before_step"]
        if type(before) is not int:
            raise ValueError("before_step is not an integer")
        return entry, FollowUp(before, message_from_dict(entry["message"]))
    return entry, None


def _token_ids(value: object) -> tuple[int, ...]:
    """Token ids read back from JSON; anything else (absent, damaged) is none."""
    if isinstance(value, list) and all(type(v) is int for v in value):
        return tuple(value)
    return ()


def new_session_id() -> str:
    """A sortable, unique id: UTC time plus random hex."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


def atomic_write(path: Path, text: str) -> None:
    """Replace `path` with `text` durably; a full disk raises StoreWriteError, old file intact."""
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        if is_full_disk(exc):
            raise StoreWriteError(path, exc) from exc
        raise


def _message_entry(message: Message) -> dict[str, Any]:
    """The transcript entry of an opening message."""
    return {"kind": "message", "message": message_to_dict(message)}


def _line(entry: dict[str, Any]) -> bytes:
    return (dumps(entry) + "\n").encode("utf-8")


def _write_whole(path: Path, data: bytes) -> None:
    """Create `path` with `data`, fsynced; a full disk raises StoreWriteError."""
    try:
        write_new(path, data)
    except OSError as exc:
        if is_full_disk(exc):
            raise StoreWriteError(path, exc) from exc
        raise


def _append_whole(path: Path, data: bytes) -> None:
    """Append `data` durably, or leave the file as it was (a short write is cut off again)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError:
            os.ftruncate(fd, start)  # needs no space: the last line on disk stays whole
            raise
    finally:
        os.close(fd)


class SessionStore:
    """Sessions under one root folder (AppPaths.sessions_dir)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def session_dir(self, session_id: str) -> Path:
        """The folder of one session."""
        return self.root / session_id

    def stage(self, session_id: str) -> StagedSession:
        """Begin a new session's folder, hidden and locked until `create` publishes it."""
        return StagedSession.begin(self.root, session_id)

    def create(
        self,
        record: SessionRecord,
        opening: Sequence[Message] = (),
        staged: StagedSession | None = None,
    ) -> SessionRecord:
        """Store a new session with its opening messages: it appears whole or not at all.

        The files are written in the hidden folder `staged` (one is made when None) and the
        folder is renamed into place, so no reader, and no crash, sees a record without its
        transcript. FileExistsError when the session exists.
        """
        own = staged is None
        staging = staged if staged is not None else self.stage(record.id)
        try:
            now = time.time()
            record.created_at = record.created_at or now
            record.updated_at = now
            lines = b"".join(_line(_message_entry(m)) for m in opening)
            _write_whole(staging.path / TRANSCRIPT_FILE, lines)
            atomic_write(staging.path / RECORD_FILE, record.to_json())
            staging.publish()
        except BaseException:
            if own:
                staging.drop()
            raise
        return record

    def forget(self, session_id: str) -> None:
        """Remove a session that never ran (its start failed), leaving no row behind.

        The folder is first renamed back to a hidden staging name, so a kill midway leaves
        only what the next start's sweep clears, never a half-removed session.
        """
        hidden = staging_path(self.root, session_id)
        os.rename(self.session_dir(session_id), hidden)
        shutil.rmtree(hidden, ignore_errors=True)

    def update(self, record: SessionRecord) -> None:
        """Write the record back atomically."""
        record.updated_at = time.time()
        atomic_write(self.session_dir(record.id) / RECORD_FILE, record.to_json())

    def get(self, session_id: str) -> SessionRecord:
        """A session by id, or by a prefix that names exactly one session.

        A damaged record raises SessionDamagedError naming the file and the way on.
        """
        if session_id.startswith("."):
            raise SessionNotFoundError(f"no session {session_id!r}")  # a session being made
        folder = self.session_dir(session_id)
        if not (folder / RECORD_FILE).is_file() and not (session_id and folder.is_dir()):
            matches = [r for r in self.list() if r.id.startswith(session_id)] if session_id else []
            if len(matches) != 1:
                damaged = [d for d in self.damaged() if d.id.startswith(session_id)]
                if session_id and len(damaged) == 1 and not matches:
                    raise SessionDamagedError(damaged[0])
                raise SessionNotFoundError(f"no session {session_id!r}")
            return matches[0]
        record = _read_record(folder)
        if isinstance(record, DamagedSession):
            raise SessionDamagedError(record)
        self.sweep(record.id)
        return record

    def sweep(self, session_id: str) -> list[Path]:
        """Remove the temp files killed writes left in a session's folder and its apply
        records' folders (never a live writer's); returns them."""
        return sweep_tree(self.session_dir(session_id), 2)

    def sweep_all(self) -> list[Path]:
        """Sweep the top folder of every session (records, journals), for startup."""
        return sweep_tree(self.root, 1)

    def damaged(self) -> list[DamagedSession]:
        """Session folders whose record cannot be read, by id."""
        return sorted(
            (r for r in _scan(self.root) if isinstance(r, DamagedSession)), key=lambda d: d.id
        )

    def list(self) -> list[SessionRecord]:
        """Every readable session, newest first (damaged ones: see `damaged`)."""
        out = [r for r in _scan(self.root) if isinstance(r, SessionRecord)]
        return sorted(out, key=lambda r: (r.created_at, r.id), reverse=True)

    # transcript ---------------------------------------------------------------

    def _append(self, session_id: str, entry: dict[str, Any]) -> None:
        path = self.session_dir(session_id) / TRANSCRIPT_FILE
        try:
            _append_whole(path, _line(entry))
        except OSError as exc:
            if is_full_disk(exc):
                raise StoreWriteError(path, exc) from exc
            raise

    def append_message(self, session_id: str, message: Message) -> None:
        """Append an opening message (system, task) to the transcript, durably."""
        self._append(session_id, _message_entry(message))

    def append_followup(self, session_id: str, message: Message, before_step: int) -> None:
        """Append a user message that the model reads before step `before_step`, durably."""
        entry = {"kind": "followup", "before_step": before_step}
        self._append(session_id, {**entry, "message": message_to_dict(message)})

    def append_step(
        self,
        session_id: str,
        step: StepRecord,
        raw_text: str = "",
        raw_tokens: Sequence[int] = (),
    ) -> None:
        """Append one finished step, durably: a crash after this loses nothing of it.

        `raw_text` is the model's reply exactly as generated (kept beside the parsed step),
        `raw_tokens` its sampled token ids where the backend reports them.
        """
        entry: dict[str, Any] = {"kind": "step", "step": step_to_dict(step)}
        if raw_text:
            entry["raw_text"] = raw_text
            if raw_tokens:
                entry["raw_tokens"] = list(raw_tokens)
        self._append(session_id, entry)

    def append_end(self, session_id: str, data: dict[str, Any]) -> None:
        """Record how a run ended (exit reason, error); a resume may follow."""
        self._append(session_id, {"kind": "end", **data})

    def _lines(self, session_id: str) -> Iterator[tuple[int, bool, str]]:
        path = self.session_dir(session_id) / TRANSCRIPT_FILE
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return
        chunks = raw.split(b"\n")
        for i, chunk in enumerate(chunks):
            if chunk.strip():
                yield i + 1, i == len(chunks) - 1, chunk.decode("utf-8", errors="replace")

    def read_transcript(self, session_id: str) -> Transcript:
        """Read the transcript back; a torn last line (crash mid-write) is dropped."""
        out = Transcript()
        for number, is_last, line in self._lines(session_id):
            try:
                entry, parsed = _parse_entry(line)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                if is_last:
                    out.dropped_tail = True
                    continue
                path = self.session_dir(session_id) / TRANSCRIPT_FILE
                reason = f"line {number} is not a transcript entry ({type(exc).__name__})"
                raise SessionDamagedError(DamagedSession(session_id, path, reason)) from None
            if isinstance(parsed, StepRecord):
                step = parsed
                # A step re-run after a resume replaces the one it repeats.
                out.steps = [s for s in out.steps if s.step < step.step]
                out.steps.append(step)
                out.raw_texts = {k: v for k, v in out.raw_texts.items() if k < step.step}
                out.raw_tokens = {k: v for k, v in out.raw_tokens.items() if k < step.step}
                if isinstance(entry.get("raw_text"), str):
                    out.raw_texts[step.step] = entry["raw_text"]
                    out.raw_tokens[step.step] = _token_ids(entry.get("raw_tokens"))
            elif isinstance(parsed, Message):
                out.messages.append(parsed)
            elif isinstance(parsed, FollowUp):
                out.followups.append(parsed)
            elif entry["kind"] == "end":
                out.end = entry
        return out

    def repair_damaged_lines(self, session_id: str) -> int:
        """Set the transcript's unreadable lines aside (appended to transcript.damaged.jsonl)
        and keep the rest, atomically; returns how many lines were set aside."""
        folder = self.session_dir(session_id)
        path = folder / TRANSCRIPT_FILE
        good: list[bytes] = []
        bad: list[bytes] = []
        for chunk in path.read_bytes().split(b"\n"):
            if not chunk.strip():
                continue
            try:
                _parse_entry(chunk.decode("utf-8", errors="replace"))
                ok = True
            except (ValueError, KeyError, TypeError, AttributeError):
                ok = False  # what read_transcript refuses
            (good if ok else bad).append(chunk + b"\n")
        if bad:
            _append_whole(folder / DAMAGED_LINES_FILE, b"".join(bad))
            atomic_write_bytes(path, b"".join(good))
        return len(bad)

    def repair_transcript(self, session_id: str) -> bool:
        """Cut a torn last line so new lines start clean; True when something was cut."""
        path = self.session_dir(session_id) / TRANSCRIPT_FILE
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return False
        if not raw or raw.endswith(b"\n"):
            return False
        keep = raw.rfind(b"\n") + 1
        with open(path, "r+b") as handle:
            handle.truncate(keep)
            handle.flush()
            os.fsync(handle.fileno())
        return True
