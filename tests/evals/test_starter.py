"""The starter suite: enough tasks, each failing its check untouched and passing with its fix."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from frogdesk.evals.repo import make_task_repo
from frogdesk.evals.starter import starter_tasks
from frogdesk.evals.suites import load_suite, skip_missing_tools
from frogdesk.evals.task import EvalTask
from tests.evals.helpers import run_check

TASKS = starter_tasks()


def test_the_suite_has_fifteen_tasks_of_three_kinds() -> None:
    assert len(TASKS) >= 15
    assert len({t.name for t in TASKS}) == len(TASKS)
    assert {t.requires for t in TASKS} >= {("python3",), ("node",), ("sh",)}
    assert sum(t.kind == "bugfix" for t in TASKS[:5]) == 5  # the bench takes these five
    for task in TASKS:
        assert task.solution and task.restore, task.name
        assert set(task.solution) <= set(task.files), task.name
        assert not set(task.solution) & set(task.restore), task.name  # a fix never edits tests


@pytest.mark.parametrize("task", TASKS, ids=[t.name for t in TASKS])
def test_the_check_fails_untouched_and_passes_with_the_reference(
    task: EvalTask, tmp_path: Path
) -> None:
    missing = [tool for tool in task.requires if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} is not installed here")
    before = run_check(task, make_task_repo(task, tmp_path / "before"))
    assert before.returncode != 0, before.stdout + before.stderr
    after = run_check(task, make_task_repo(task, tmp_path / "after", solved=True))
    assert after.returncode == 0, after.stdout + after.stderr


def test_the_snapshot_holds_no_solution() -> None:
    for task in TASKS:
        for path, fixed in task.solution.items():
            assert task.files[path] != fixed, task.name


def test_a_missing_toolchain_is_a_skip_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    suite = skip_missing_tools(load_suite("starter"))
    assert suite.tasks == []
    assert suite.problems["js-clamp"] == "skipped: node is not installed here"
