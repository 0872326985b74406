"""A resumed script session replays the rest of its own script: the same file (its dialect
line kept, its line numbers in errors), and no copy of it left in the temp folder."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from frogdesk.config import Settings
from frogdesk.engine.script_backend import ScriptBackend
from frogdesk.sessions.parts import default_backend
from frogdesk.sessions.record import SessionRecord


def _script(tmp_path: Path) -> Path:
    path = tmp_path / "replies.jsonl"
    lines = [
        {"dialect": "hermes_json", "thinking": False},
        {"text": "first"},
        {"text": "second"},
        {"error": "the endpoint fell over"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _record(script: Path) -> SessionRecord:
    return SessionRecord("s1", "/repo", "/repo-wt", "0" * 40, "task", str(script), "script")


def _temp_copies() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("frogdesk-*.jsonl")}


def test_a_resumed_script_session_goes_on_in_its_own_file(tmp_path: Path) -> None:
    script = _script(tmp_path)
    before = _temp_copies()
    backend = default_backend(_record(script), Settings(), replies_done=2)
    assert isinstance(backend, ScriptBackend)
    assert _temp_copies() == before  # no copy of the script's rest written anywhere
    assert backend.info.model == str(script)
    assert backend.dialect.name == "hermes_json"  # the dialect line is kept
    assert backend.replies_left == 1


def test_the_temp_check_sees_a_copy_where_one_is_written() -> None:
    # the control: the same check notices a script copy in the temp folder
    before = _temp_copies()
    with tempfile.NamedTemporaryFile(prefix="frogdesk-s1-", suffix=".jsonl") as copy:
        assert _temp_copies() - before == {Path(copy.name).name}


def test_skipped_replies_keep_the_files_line_numbers(tmp_path: Path) -> None:
    backend = ScriptBackend(_script(tmp_path), skip=2)
    reply = backend._take()
    assert reply is not None and reply.line == 4 and reply.error


def test_a_negative_skip_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot be negative"):
        ScriptBackend(_script(tmp_path), skip=-1)
