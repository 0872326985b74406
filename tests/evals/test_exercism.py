"""The Exercism practice layout: instructions become the task, the tests are put back, .meta unseen."""

from __future__ import annotations

import json
from pathlib import Path

from frogdesk.evals.exercism import load_exercise
from frogdesk.evals.repo import make_task_repo
from frogdesk.evals.suites import load_suite
from frogdesk.paths import AppPaths
from frogdesk.sessions.store import SessionStore
from tests.evals.helpers import DONE, bash, by_task, eval_json, run_check, scripts, write

STUB = "def two_fer(name):\n    pass\n"
EXAMPLE = 'def two_fer(name="you"):\n    return f"One for {name}, one for me."\n'
TEST = (
    "import unittest\n\nfrom two_fer import two_fer\n\n\n"
    "class TwoFerTest(unittest.TestCase):\n"
    "    def test_no_name(self):\n        self.assertEqual(two_fer(), 'One for you, one for me.')\n\n"
    "    def test_a_name(self):\n        self.assertEqual(two_fer('Alice'), 'One for Alice, one for me.')\n"
)


def exercism_clone(root: Path) -> Path:
    """A tiny exercism/python-shaped clone with two practice exercises."""
    for name in ("two-fer", "two-fer-again"):
        ex = root / "exercises" / "practice" / name
        (ex / ".docs").mkdir(parents=True)
        (ex / ".meta").mkdir()
        (ex / ".docs" / "instructions.md").write_text(
            "# Two-fer\n\nReturn 'One for X, one for me.' (X is 'you' without a name).\n",
            encoding="utf-8",
        )
        config = {
            "files": {
                "solution": ["two_fer.py"],
                "test": ["two_fer_test.py"],
                "example": [".meta/example.py"],
            }
        }
        (ex / ".meta" / "config.json").write_text(json.dumps(config), encoding="utf-8")
        (ex / ".meta" / "example.py").write_text(EXAMPLE, encoding="utf-8")
        (ex / "two_fer.py").write_text(STUB, encoding="utf-8")
        (ex / "two_fer_test.py").write_text(TEST, encoding="utf-8")
    return root


def test_an_exercise_becomes_a_task(tmp_path: Path) -> None:
    clone = exercism_clone(tmp_path / "python")
    task = load_exercise(clone / "exercises" / "practice" / "two-fer")
    assert "Return 'One for X" in task.text and "two_fer.py" in task.text
    assert task.restore == ("two_fer_test.py",)
    assert not any(p.startswith(".meta") for p in task.files)
    assert task.solution == {"two_fer.py": EXAMPLE.encode()}
    assert run_check(task, make_task_repo(task, tmp_path / "before")).returncode != 0
    assert run_check(task, make_task_repo(task, tmp_path / "after", solved=True)).returncode == 0
    suite = load_suite(str(clone))
    assert suite.layout == "exercism" and [t.name for t in suite.tasks] == [
        "two-fer",
        "two-fer-again",
    ]


def test_an_exercism_clone_runs_with_its_tests_put_back(tmp_path: Path) -> None:
    clone = exercism_clone(tmp_path / "python")
    solve = [bash("ls .meta"), write("two_fer.py", EXAMPLE), DONE]
    cheat = [write("two_fer_test.py", "import unittest\n"), DONE]
    replies = scripts(tmp_path / "s", {"two-fer": solve, "two-fer-again": cheat})
    data = eval_json(str(clone), "--script", str(replies))
    tasks = by_task(data)
    assert data["layout"] == "exercism"
    assert tasks["two-fer"]["solved"] is True
    assert tasks["two-fer-again"]["solved"] is False  # emptied tests were put back
    store = SessionStore(AppPaths.default().sessions_dir)
    steps = store.read_transcript(tasks["two-fer"]["attempts"][0]["session_id"]).steps
    assert "No such file" in steps[0].observations[0].observation  # the example stays unseen
