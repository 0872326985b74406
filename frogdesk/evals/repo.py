"""A task's snapshot as a fresh git repository of its own, made in a folder FrogDesk owns."""

from __future__ import annotations

import shutil
from pathlib import Path

from frogdesk.evals.task import EvalTask, write_files
from frogdesk.worktree.git import run_git

IDENTITY = {
    "GIT_AUTHOR_NAME": "FrogDesk eval",
    "GIT_AUTHOR_EMAIL": "eval@frogdesk.invalid",
    "GIT_COMMITTER_NAME": "FrogDesk eval",
    "GIT_COMMITTER_EMAIL": "eval@frogdesk.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}
"""A fixed author and date: the same snapshot gives the same commit on every run."""


def make_task_repo(task: EvalTask, folder: Path, *, solved: bool = False) -> Path:
    """`folder` (made new, emptied first) as a git repository with the snapshot committed.

    With `solved`, the reference solution and the put-back files are written on top,
    uncommitted (what a perfect model would leave), for the suite's own tests.
    """
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    write_files(folder, task.files, task.executables)
    run_git(folder, ["init", "-q", "-b", "main"])
    run_git(folder, ["add", "-A"])
    run_git(folder, ["commit", "-q", "--no-verify", "-m", f"eval task {task.name}"], env=IDENTITY)
    if solved:
        write_files(folder, task.solution, frozenset())
        write_files(folder, task.put_back(), task.executables)
    return folder
