"""A full disk during apply: one clear line, nothing half-written, no stray file, no record."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from frogdesk.cli import main
from frogdesk.paths import AppPaths
from frogdesk.review.journal import JOURNAL_FILE, STAGING_DIR
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.store import SessionStore
from frogdesk.worktree.checkout import create_worktree
from tests.support.review_helpers import git, repo_fingerprint


def _repo(where: Path) -> Path:
    repo = where / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    return repo


def _session(repo: Path, worktrees: Path, sid: str) -> Path:
    wt = create_worktree(repo, worktrees, sid)
    SessionStore(AppPaths.default().sessions_dir).create(
        SessionRecord(sid, str(repo), str(wt.path), wt.base_commit, task="t", model="m")
    )
    return wt.path


def _fill(folder: Path) -> None:
    """Take every free byte of the file system under folder."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)


def _nothing_left(repo: Path, sid: str) -> None:
    session_dir = AppPaths.default().sessions_dir / sid
    assert not list((repo / ".git").glob(f"{STAGING_DIR}*"))
    assert not (session_dir / JOURNAL_FILE).exists()
    assert (
        not list((session_dir / "applies").glob("*"))
        if (session_dir / "applies").exists()
        else True
    )


def test_a_repository_disk_that_fills_during_staging(
    small_disk: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _repo(small_disk)
    wt = _session(repo, tmp_path / "worktrees", "full-1")
    (wt / "a.txt").write_text("A\n")
    (wt / "big.bin").write_bytes(b"\x01" * (4 * 2**20))  # more than the whole disk
    before = repo_fingerprint(repo)
    assert main(["apply", "full-1", "--all"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("frogdesk: apply failed, nothing was written: ")
    assert "No space left on device" in err and err.count("\n") == 1
    assert repo_fingerprint(repo) == before
    _nothing_left(repo, "full-1")
    (wt / "big.bin").unlink()  # control: the same apply without the big file goes through
    assert main(["apply", "full-1", "--all"]) == 0
    assert (repo / "a.txt").read_text() == "A\n"


def test_a_session_store_disk_that_is_full_before_the_journal(
    small_disk: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("FROGDESK_HOME", str(small_disk / "home"))
    repo = _repo(tmp_path)
    wt = _session(repo, tmp_path / "worktrees", "full-2")
    (wt / "a.txt").write_text("A\n")
    (wt / "new.txt").write_text("new\n")
    before = repo_fingerprint(repo)
    _fill(small_disk)
    assert main(["apply", "full-2", "--all"]) == 2
    err = capsys.readouterr().err
    assert "nothing was written" in err and "No space left on device" in err
    assert repo_fingerprint(repo) == before
    _nothing_left(repo, "full-2")
    (small_disk / "filler").unlink()  # control: with room again, the apply goes through
    assert main(["apply", "full-2", "--all"]) == 0
    assert (repo / "new.txt").read_text() == "new\n"
    assert main(["undo", "full-2"]) == 0 and repo_fingerprint(repo) == before
