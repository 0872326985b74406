"""The session store: records written atomically, an append-only transcript that survives a torn line."""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk.engine.chat import Message, ToolCall, Usage
from frogdesk.leaf.records import Observation, StepRecord
from frogdesk.sessions.errors import SessionNotFoundError
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.store import SessionStore


def record(session_id: str, created: float = 0.0) -> SessionRecord:
    return SessionRecord(session_id, "/r", "/w", "abc", "task", "m.gguf", created_at=created)


def step(i: int) -> StepRecord:
    call = ToolCall("Read", {"file_path": "a.py", "limit": 2}, f"c{i}")
    return StepRecord(
        i,
        Message("assistant", f"content {i}", "why", (call,)),
        (Observation("Read", f"a.py\n1. x{i}", True, 0.01, f"c{i}"),),
        Usage(10, 5, 5, 3),
        0.5,
        0.01,
        "tool_calls",
    )


def test_create_get_update_list(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    store.create(record("20260101-000000-aaaaaa", 1.0))
    store.create(record("20260102-000000-bbbbbb", 2.0))
    got = store.get("20260101-000000-aaaaaa")
    assert got.task == "task" and got.status == "created"
    got.status = "running"
    store.update(got)
    assert store.get("20260101").status == "running"
    assert [r.id for r in store.list()] == ["20260102-000000-bbbbbb", "20260101-000000-aaaaaa"]
    with pytest.raises(SessionNotFoundError):
        store.get("2026")  # ambiguous prefix
    with pytest.raises(SessionNotFoundError):
        store.get("nope")
    with pytest.raises(FileExistsError):
        store.create(record("20260101-000000-aaaaaa"))
    assert not list(tmp_path.rglob("*.tmp"))


def test_unreadable_sessions_are_skipped(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    store.create(record("good"))
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "session.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    assert [r.id for r in store.list()] == ["good"]


def test_transcript_round_trip(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    store.create(record("s"))
    opening = [Message("system", "sys"), Message("user", "do it")]
    for m in opening:
        store.append_message("s", m)
    for i in range(3):
        store.append_step("s", step(i))
    store.append_end("s", {"exit_reason": "max_turns"})
    t = store.read_transcript("s")
    assert t.messages == opening and t.steps == [step(0), step(1), step(2)]
    assert t.end is not None and t.end["exit_reason"] == "max_turns"
    conv = t.conversation()
    assert [m.role for m in conv] == ["system", "user"] + ["assistant", "tool"] * 3
    assert conv[3] == Message("tool", "a.py\n1. x0", tool_call_id="c0", name="Read")


def test_torn_last_line_is_dropped_and_repaired(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    store.create(record("s"))
    store.append_message("s", Message("user", "go"))
    store.append_step("s", step(0))
    path = tmp_path / "s" / "transcript.jsonl"
    with open(path, "ab") as handle:
        handle.write(b'{"kind":"step","step":{"step":1,"assis')
    t = store.read_transcript("s")
    assert t.dropped_tail and t.steps == [step(0)]
    assert store.repair_transcript("s")
    assert not store.repair_transcript("s")
    store.append_step("s", step(1))
    assert store.read_transcript("s").steps == [step(0), step(1)]


def test_corruption_before_the_end_is_an_error(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    store.create(record("s"))
    path = tmp_path / "s" / "transcript.jsonl"
    path.write_text(
        "garbage\n" + '{"kind":"message","message":{"role":"user","content":"x"}}\n',
        encoding="utf-8",
    )
    with pytest.raises(ValueError):
        store.read_transcript("s")


def test_a_rerun_step_replaces_the_one_it_repeats(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    store.create(record("s"))
    for i in (0, 1, 1, 2):
        store.append_step("s", step(i))
    assert [s.step for s in store.read_transcript("s").steps] == [0, 1, 2]
