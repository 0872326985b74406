"""Pure parts of attempts: check detection, summary lines, ranking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frogdesk.attempts.rank import pick, rank
from frogdesk.attempts.record import AttemptResult
from frogdesk.attempts.service import attempt_seeds
from frogdesk.attempts.verify import PYTEST, CheckResult, detect_check, summary_line


@pytest.mark.parametrize(
    ("files", "command"),
    [
        ({"pyproject.toml": "[tool.pytest.ini_options]\n"}, PYTEST),
        ({"setup.cfg": "[tool:pytest]\n"}, PYTEST),
        ({"tests/test_x.py": ""}, PYTEST),
        ({"package.json": json.dumps({"scripts": {"test": "jest"}})}, "npm test"),
        ({"Cargo.toml": "[package]\n"}, "cargo test"),
        ({"go.mod": "module x\n"}, "go test ./..."),
        ({"Makefile": "all:\n\ttrue\ntest: all\n\ttrue\n"}, "make test"),
    ],
)
def test_detects_each_ecosystem(tmp_path: Path, files: dict[str, str], command: str) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = detect_check(tmp_path)
    assert found is not None and found.command == command and found.reason


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"package.json": "{not json"},
        {"package.json": json.dumps({"scripts": {"build": "x"}})},
        {"pyproject.toml": "[[broken"},
        {"Makefile": "all:\n\ttrue\n"},
    ],
)
def test_nothing_recognised_is_none(tmp_path: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert detect_check(tmp_path) is None


def test_summary_is_the_last_line_made_inert() -> None:
    assert summary_line("a\n3 passed in 0.1s\n\n", "") == "3 passed in 0.1s"
    assert summary_line("", "boom\n") == "boom"
    assert "\x1b" not in summary_line("\x1b[31mred\x1b[0m\n", "")


def attempt(
    index: int, exit_code: int | None, reason: str = "agent", lines: int = 1, steps: int = 3
) -> AttemptResult:
    check = None if exit_code is None else CheckResult("c", exit_code, "", 0.1)
    return AttemptResult(
        index,
        f"s{index}",
        index,
        reason,
        files_changed=("f",) if lines else (),
        lines_added=lines,
        n_steps=steps,
        check=check,
    )


def test_ranking_puts_the_passed_check_first_then_the_stated_order() -> None:
    attempts = [
        attempt(0, 1, lines=1),
        attempt(1, 0, reason="max_turns", lines=5),
        attempt(2, 0, lines=9),
        attempt(3, 0, lines=2, steps=9),
        attempt(4, 0, lines=2, steps=4),
        attempt(5, 0, lines=0),
    ]
    assert [a.index for a in rank(attempts)] == [4, 3, 2, 5, 1, 0]
    assert pick(rank(attempts)) is not None
    assert pick(rank([attempt(0, 1), attempt(1, None)])) is None


def test_seeds_differ_and_follow_a_given_base() -> None:
    assert attempt_seeds(7, 3) == [7, 8, 9]
    drawn = attempt_seeds(-1, 4)
    assert len(set(drawn)) == 4 and min(drawn) >= 0
