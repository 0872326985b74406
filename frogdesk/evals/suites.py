"""Finding a suite's tasks: the starter suite, a folder of task folders, or an Exercism clone."""

from __future__ import annotations

import fnmatch
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from frogdesk.evals.errors import EvalError
from frogdesk.evals.exercism import load_exercise, practice_root
from frogdesk.evals.starter import STARTER, starter_tasks
from frogdesk.evals.task import EvalTask, load_task_folder


@dataclass
class Suite:
    """The tasks that can run, and one line for each task that cannot (bad or skipped)."""

    name: str
    layout: str
    """`starter`, `frogdesk` (task folders) or `exercism`."""
    tasks: list[EvalTask] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)
    """Task name -> why it does not run (a malformed task, a missing toolchain)."""


def _task_folders(folder: Path) -> list[Path]:
    if (folder / "task.toml").is_file():
        return [folder]
    return sorted(d for d in folder.iterdir() if d.is_dir() and not d.name.startswith("."))


def load_suite(spec: str, *, check: str = "", timeout: float | None = None) -> Suite:
    """The suite `spec` names: `starter`, or a folder (one task, task folders, or Exercism).

    A missing or empty folder is an EvalError; a bad task is kept as a problem and the rest
    load. `check` replaces the Exercism tracks' check command.
    """
    if spec == STARTER:
        return Suite(STARTER, "starter", starter_tasks())
    folder = Path(spec).expanduser()
    if not folder.is_dir():
        raise EvalError(f"no suite {spec!r}: give `starter` or a folder of tasks")
    name = folder.resolve().name
    practice = practice_root(folder)
    suite = Suite(name, "exercism" if practice is not None else "frogdesk")
    folders = (
        sorted(d for d in practice.iterdir() if d.is_dir())
        if practice is not None
        else _task_folders(folder)
    )
    for one in folders:
        try:
            if practice is not None:
                task = load_exercise(one, check, timeout or 120.0)
            else:
                task = load_task_folder(one)
        except EvalError as exc:
            suite.problems[one.name] = str(exc)
            continue
        suite.tasks.append(task)
    if not suite.tasks and not suite.problems:
        raise EvalError(f"{folder}: no tasks (task folders with task.toml, or Exercism exercises)")
    return suite


def select(suite: Suite, patterns: list[str]) -> Suite:
    """Only the tasks whose names match one of the glob `patterns` (all when none)."""
    if not patterns:
        return suite

    def wanted(name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in patterns)

    chosen = [t for t in suite.tasks if wanted(t.name)]
    problems = {k: v for k, v in suite.problems.items() if wanted(k)}
    if not chosen and not problems:
        raise EvalError(f"no task of {suite.name} matches {', '.join(patterns)}")
    return Suite(suite.name, suite.layout, chosen, problems)


def skip_missing_tools(suite: Suite) -> Suite:
    """Tasks whose check needs a tool this machine lacks become problems that say so."""
    kept: list[EvalTask] = []
    problems = dict(suite.problems)
    for task in suite.tasks:
        missing = [tool for tool in task.requires if shutil.which(tool) is None]
        if missing:
            problems[task.name] = f"skipped: {', '.join(missing)} is not installed here"
        else:
            kept.append(task)
    return Suite(suite.name, suite.layout, kept, problems)
