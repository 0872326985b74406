"""Watch the user's working tree while a session runs and remember which files they changed."""

from __future__ import annotations

import os
import threading
import types
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from frogdesk.worktree.errors import WorktreeError
from frogdesk.worktree.git import GitError, run_git


class _Collector(FileSystemEventHandler):
    """Hands every file path an event names to the watcher."""

    def __init__(self, watcher: RepoWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory or event.event_type in ("opened", "closed_no_write"):
            return
        paths = [event.src_path, getattr(event, "dest_path", "")]
        self.watcher._record([os.fsdecode(p) for p in paths if p])


class RepoWatcher:
    """Records repo-relative paths of files the user creates, edits, moves or deletes.

    `.git` internals, git-ignored paths and the `ignored` prefixes are left out. Events are
    batched: a burst (an editor's save, a checkout) is filtered once, `debounce` seconds after
    it quiets down, and `changed_files()` filters whatever is still pending.
    """

    def __init__(self, repo_root: Path, ignored: Sequence[str] = (), debounce: float = 0.2) -> None:
        self.repo_root = Path(repo_root).resolve()
        self.ignored = tuple(PurePosixPath(p).as_posix().rstrip("/") for p in ignored if p)
        self.debounce = debounce
        self._lock = threading.Lock()
        self._pending: set[str] = set()
        self._changed: set[str] = set()
        self._timer: threading.Timer | None = None
        self._observer: Observer | None = None  # type: ignore[valid-type]

    def start(self) -> None:
        """Begin watching (recursively); WorktreeError if the folder cannot be watched."""
        if self._observer is not None:
            return
        if not self.repo_root.is_dir():
            raise WorktreeError(f"cannot watch {self.repo_root}: not a folder")
        observer = Observer()
        observer.schedule(_Collector(self), str(self.repo_root), recursive=True)
        try:
            observer.start()
        except OSError as exc:
            raise WorktreeError(f"cannot watch {self.repo_root}: {exc}") from None
        self._observer = observer

    def stop(self) -> None:
        """Stop watching; what was recorded stays available."""
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join()
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        self._flush()

    def __enter__(self) -> RepoWatcher:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> None:
        self.stop()

    def changed_files(self) -> set[str]:
        """Repo-relative POSIX paths of the files the user changed since start()."""
        self._flush()
        with self._lock:
            return set(self._changed)

    def _relative(self, raw: str) -> str | None:
        try:
            rel = PurePosixPath(Path(raw).relative_to(self.repo_root).as_posix())
        except ValueError:
            return None
        if not rel.parts or rel.parts[0] == ".git":
            return None
        text = rel.as_posix()
        if any(text == p or text.startswith(p + "/") for p in self.ignored):
            return None
        return text

    def _record(self, raw_paths: list[str]) -> None:
        rels = [r for r in (self._relative(p) for p in raw_paths) if r is not None]
        if not rels:
            return
        with self._lock:
            self._pending.update(rels)
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.debounce, self._flush)
            self._timer.daemon = True
            self._timer.start()

    def _flush(self) -> None:
        with self._lock:
            batch, self._pending = self._pending, set()
        if not batch:
            return
        kept = batch - self._git_ignored(sorted(batch))
        with self._lock:
            self._changed.update(kept)

    def _git_ignored(self, paths: list[str]) -> set[str]:
        """The subset of paths that git ignores (checked in one `git check-ignore` call)."""
        try:
            done = run_git(
                self.repo_root,
                ["check-ignore", "-z", "--stdin"],
                stdin=b"".join(os.fsencode(p) + b"\0" for p in paths),
                ok_codes=(0, 1),
                timeout=30,
            )
        except GitError:
            return set()  # keep everything: a false alarm is safer than a missed change
        return {os.fsdecode(p) for p in done.stdout.split(b"\0") if p}
