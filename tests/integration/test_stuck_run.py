"""A run whose model makes the same call with the same result over and over ends as `stuck`,
says so in words, and keeps its record; without the limit the same script runs to its end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.scripted import call, frogdesk, make_repo, write_script

REPEATS = 10


def stuck_script(path: Path) -> Path:
    """The same Read ten times, then an answer."""
    same = "Look at it again.\n</think>\n\n" + call("Read", file_path="calc.py")
    return write_script(path, [same] * REPEATS + ["Done.\n</think>\n\nNothing to change."])


def run_json(repo: Path, script: Path) -> tuple[int, dict[str, object], str]:
    result = frogdesk(
        "run", "fix add", "--repo", str(repo), "--script", str(script), "--sandbox", "none",
        "--json",
    )  # fmt: skip
    return result.returncode, json.loads(result.stdout), result.stderr


def test_a_run_repeating_one_call_ends_as_stuck(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FROGDESK_STOP_AFTER_REPEATS", "3")
    code, data, err = run_json(make_repo(tmp_path), stuck_script(tmp_path / "s.jsonl"))
    assert code == 1, err
    assert data["exit_reason"] == "stuck" and data["n_steps"] == 3
    assert "stopped: the model repeated the same call" in err
    assert "3 times in a row" in err
    listed = frogdesk("sessions", "list")
    assert "stopped: the model repeated the same call" in listed.stdout


def test_control_with_the_limit_off_the_same_script_reaches_its_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FROGDESK_STOP_AFTER_REPEATS", "0")
    code, data, err = run_json(make_repo(tmp_path), stuck_script(tmp_path / "s.jsonl"))
    assert code == 0, err
    assert data["exit_reason"] == "agent" and data["n_steps"] == REPEATS + 1
