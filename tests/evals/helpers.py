"""Building eval suites and scripted replies for the `frogdesk eval` tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from frogdesk.evals.restore import check_command
from frogdesk.evals.task import EvalTask
from tests.support.scripted import call, write_script

CALC = "def add(a, b):\n    return a - b\n"
CALC_FIXED = "def add(a, b):\n    return a + b\n"
TEST_CALC = (
    "import unittest\n\nfrom calc import add\n\n\n"
    "class AddTest(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
)
FAKE_TEST = "import unittest\n\n\nclass AddTest(unittest.TestCase):\n    def test_add(self):\n        pass\n"
"""What a cheating model writes over the test: it passes whatever calc.py does."""


def task_folder(
    root: Path,
    name: str,
    *,
    files: dict[str, str] | None = None,
    check: str | None = "python3 -m unittest -q",
    restore: list[str] | None = None,
    hidden: dict[str, str] | None = None,
    text: str = "The test fails. Fix calc.py so that it passes.",
    extra: str = "",
) -> Path:
    """A task in FrogDesk's folder format under root/NAME."""
    folder = root / name
    for rel, content in (
        files if files is not None else {"calc.py": CALC, "test_calc.py": TEST_CALC}
    ).items():
        (folder / "repo" / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / "repo" / rel).write_text(content, encoding="utf-8")
    for rel, content in (hidden or {}).items():
        (folder / "hidden" / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / "hidden" / rel).write_text(content, encoding="utf-8")
    lines = []
    if check is not None:
        lines.append(f"check = {json.dumps(check)}")
    lines.append(f"restore = {json.dumps(restore if restore is not None else ['test_calc.py'])}")
    lines.append("timeout = 30")
    (folder / "task.toml").write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")
    (folder / "task.md").write_text(text + "\n", encoding="utf-8")
    return folder


def edit(path: str, old: str, new: str) -> str:
    """One raw reply that edits a file."""
    return "Edit it.\n</think>\n\n" + call("Edit", file_path=path, old_string=old, new_string=new)


def write(path: str, content: str) -> str:
    """One raw reply that writes a whole file."""
    return "Write it.\n</think>\n\n" + call("Write", file_path=path, content=content)


def bash(command: str) -> str:
    """One raw reply that runs a command."""
    return "Run it.\n</think>\n\n" + call("Bash", command=command)


DONE = "Done.\n</think>\n\nI fixed it."
FIX = [edit("calc.py", "return a - b", "return a + b"), DONE]
NOTHING = [DONE]


def scripts(folder: Path, per_task: dict[str, list[str]]) -> Path:
    """A script folder: TASK.jsonl for each task."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, replies in per_task.items():
        write_script(folder / f"{name}.jsonl", replies)
    return folder


def frogdesk_eval(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The real `frogdesk eval` in a subprocess (FROGDESK_HOME from the test's environment)."""
    return subprocess.run(
        [sys.executable, "-m", "frogdesk", "eval", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def eval_json(*args: str) -> dict[str, Any]:
    """`frogdesk eval ... --json --quiet`, its JSON; fails the test on a traceback or no JSON."""
    done = frogdesk_eval(*args, "--json", "--quiet")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stdout.strip(), (done.returncode, done.stderr)
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def by_task(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The --json tasks by name."""
    return {t["task"]: t for t in data["tasks"]}


def run_check(task: EvalTask, repo: Path) -> subprocess.CompletedProcess[str]:
    """The eval's own check command (put-back files first), run plainly in the repository."""
    return subprocess.run(
        ["bash", "-c", check_command(task)], cwd=repo, capture_output=True, text=True, timeout=120
    )
