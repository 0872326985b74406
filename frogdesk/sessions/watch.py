"""Watching the user's repository while a session runs, and keeping what they changed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from frogdesk.review.user_changes import record_user_changes
from frogdesk.worktree.errors import WorktreeError
from frogdesk.worktree.watcher import RepoWatcher


class UserChangeLog:
    """A RepoWatcher on the user's repository whose findings go to the session folder.

    Recorded paths are merged with earlier runs' (user_changes.json), so the review can
    flag every file the user touched while any run of the session was going on.
    """

    def __init__(self, repo: Path, session_dir: Path, ignored: Sequence[str] = ()) -> None:
        self.session_dir = session_dir
        self.watcher = RepoWatcher(repo, ignored)
        self._running = False

    def start(self) -> str:
        """Begin watching; "" when it works, else why not (the run goes on unwatched)."""
        try:
            self.watcher.start()
        except WorktreeError as exc:
            return f"your repository is not watched during this run: {exc}"
        self._running = True
        return ""

    def save(self) -> set[str]:
        """Write what was seen so far (a crash keeps it); the whole recorded set."""
        return record_user_changes(self.session_dir, self.watcher.changed_files())

    def stop(self) -> set[str]:
        """Stop watching and write what was seen; the whole recorded set."""
        if self._running:
            self.watcher.stop()
            self._running = False
        return self.save()
