"""The repository watcher on a real repository and real inotify events."""

from __future__ import annotations

import time
from pathlib import Path

from frogdesk.worktree.watcher import RepoWatcher
from tests.support.gitutil import git


def wait_for(watcher: RepoWatcher, path: str) -> set[str]:
    """Poll until path shows up (events are asynchronous), then return everything recorded."""
    for _ in range(1000):
        changed = watcher.changed_files()
        if path in changed:
            return changed
        time.sleep(0.02)
    raise AssertionError(f"{path} never reported; got {watcher.changed_files()}")


def test_records_user_changes_but_not_git_internals_or_ignored(repo: Path) -> None:
    with RepoWatcher(repo, ignored=["build"]) as watcher:
        assert watcher.changed_files() == set()
        (repo / "debug.log").write_text("ignored by .gitignore\n")
        (repo / ".venv" / "marker").write_text("ignored dir\n")
        (repo / "build").mkdir()
        (repo / "build" / "out.o").write_text("ignored by the caller\n")
        git(repo, "add", "notes.txt")  # writes .git/index
        (repo / "src" / "app.py").write_text("print('user edit')\n")
        (repo / "new file ü.txt").write_text("new\n")
        (repo / "README.md").unlink()
        (repo / "notes.txt").rename(repo / "renamed.txt")
        (repo / "sentinel.txt").write_text("last\n")
        changed = wait_for(watcher, "sentinel.txt")
    assert {"src/app.py", "new file ü.txt", "README.md", "notes.txt", "renamed.txt"} <= changed
    assert not any(p.startswith((".git/", ".venv/", "build/")) or p == ".git" for p in changed)
    assert "debug.log" not in changed


def test_nothing_recorded_after_stop(repo: Path) -> None:
    watcher = RepoWatcher(repo)
    watcher.start()
    (repo / "before.txt").write_text("x\n")
    wait_for(watcher, "before.txt")
    watcher.stop()
    (repo / "after.txt").write_text("x\n")
    assert watcher.changed_files() == {"before.txt"}


def test_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    from frogdesk.worktree.errors import WorktreeError

    try:
        RepoWatcher(tmp_path / "gone").start()
    except WorktreeError as exc:
        assert "cannot watch" in str(exc)
    else:
        raise AssertionError("expected WorktreeError")
