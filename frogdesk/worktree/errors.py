"""The git side's exceptions: one base class, one subclass per thing the user can fix."""

from __future__ import annotations

import shlex
from pathlib import Path

from frogdesk.errors import FrogDeskError


class WorktreeError(FrogDeskError):
    """Something in a session worktree, the user's repository or git failed; the message says what."""


class NotAGitRepository(WorktreeError):
    """The folder is not inside a git repository; the message offers `git init`."""

    def __init__(self, path: Path) -> None:
        where = shlex.quote(str(path))
        super().__init__(
            f"{path} is not inside a git repository. FrogDesk works on a git repository so "
            "that every change can be reviewed and undone. To make it one, run: "
            f"cd {where} && git init && git add --all && git commit -m 'First commit'"
        )
        self.path = path


class BareRepository(WorktreeError):
    """The repository has no working tree, so there is nothing to snapshot or edit."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} is a bare git repository (it has no working tree); "
            "open a clone of it that has a checkout instead."
        )
        self.path = path


class GitError(WorktreeError):
    """A git command failed; the message carries git's own words."""


class TamperedWorktree(GitError):
    """A worktree's git metadata no longer matches its record: FrogDesk will not run git on it."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(
            f"the session worktree {path} was tampered with from inside the sandbox ({problem}); "
            "FrogDesk will not run git on it or resume it: review its files by hand, then "
            "discard the session"
        )
        self.path = path
