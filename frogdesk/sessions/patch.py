"""The session's output patch: the worktree against its base commit, untracked files included."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from frogdesk.review.diff import patch_text
from frogdesk.review.gitcmd import GitError
from frogdesk.sessions.errors import PatchError


@dataclass(frozen=True)
class WorktreeDiff:
    """The patch text (as `git apply` takes it) and the paths it touches."""

    patch: str
    files: list[str]


def worktree_diff(worktree: Path, base_commit: str) -> WorktreeDiff:
    """Diff everything in the worktree (tracked or new, not ignored) against `base_commit`.

    The review's own snapshot is used (a throwaway index), so the worktree's index is left
    as it was and the patch matches what `frogdesk review` shows.
    """
    try:
        patch, files = patch_text(worktree, base_commit)
    except GitError as exc:
        raise PatchError(
            f"cannot diff the worktree {worktree} ({exc}); if its .git file or folder is "
            "broken, run `git worktree repair` in your repository, or discard the session"
        ) from None
    return WorktreeDiff(patch, files)
