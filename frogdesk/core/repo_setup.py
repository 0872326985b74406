"""A folder that is not a git repository yet: said at start, before any model loads, and made
one on request (`git init` and a first commit of the files as they are)."""

from __future__ import annotations

from pathlib import Path

from frogdesk.worktree.checkout import find_repo_root
from frogdesk.worktree.errors import GitError, NotAGitRepository, WorktreeError
from frogdesk.worktree.git import git_out

INIT_QUESTION = (
    "This folder is not a git repository. Initialise one here? "
    "(git init + first commit of the current files)"
)
"""What the TUI asks when it opens on a folder that is no repository."""

FIRST_COMMIT_MESSAGE = "First commit (made by FrogDesk before its first session)"

# Used only when git knows no identity of the user: the first commit must not fail on it.
_FALLBACK_IDENTITY = ("user.name=FrogDesk", "user.email=frogdesk@localhost")
_COMMIT_CONFIG = ("commit.gpgsign=false",)


def not_a_repository(path: Path) -> NotAGitRepository | None:
    """The refusal for a folder that is inside no git repository; None when it is inside one.

    A bare repository or a missing folder is left to the session start, which says so.
    """
    try:
        find_repo_root(path)
    except NotAGitRepository as exc:
        return exc
    except WorktreeError:  # bare, or missing: the session start says so
        return None
    return None


def check_repository(path: Path) -> None:
    """Raise NotAGitRepository (one line, with the command to run) when `path` is no repository."""
    problem = not_a_repository(path)
    if problem is not None:
        raise problem


def init_repository(path: Path) -> str:
    """`git init` in `path` and a first commit of every file in it (.gitignore honoured);
    the line that says what was made. GitError when git refuses."""
    folder = path.resolve()
    git_out(folder, ["init", "--quiet"], neutral=False)
    git_out(folder, ["add", "--all"], neutral=False)
    commit = ["commit", "--quiet", "--allow-empty", "--no-verify", "-m", FIRST_COMMIT_MESSAGE]
    try:
        git_out(folder, commit, neutral=False, config=_COMMIT_CONFIG)
    except GitError:
        # no user.name / user.email configured: commit under FrogDesk's name rather than fail
        git_out(folder, commit, neutral=False, config=(*_COMMIT_CONFIG, *_FALLBACK_IDENTITY))
    count = git_out(folder, ["ls-files", "-z"]).count(b"\0")
    files = "1 file" if count == 1 else f"{count} files"
    return f"Made {folder} a git repository; its first commit holds {files}."
