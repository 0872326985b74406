"""SIGKILL at every step of a real `frogdesk apply` / `frogdesk undo`: the tree is exactly before or after."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from frogdesk.cli import main
from frogdesk.paths import AppPaths
from frogdesk.review.faults import FAULT_ENV
from frogdesk.review.journal import JOURNAL_FILE, STAGING_DIR
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.store import SessionStore
from tests.support.review_helpers import MakeSession, repo_fingerprint

SID = "crash-1"


def _frogdesk(*args: str, kill_at: int = 0) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop(FAULT_ENV, None)
    if kill_at:
        env[FAULT_ENV] = str(kill_at)
    return subprocess.run(
        [sys.executable, "-m", "frogdesk", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _session_with_every_kind_of_change(repo: Path, make_session: MakeSession) -> None:
    (repo / "tool.sh").write_bytes(b"#!/bin/sh\necho hi\n")
    (repo / "tool.sh").chmod(0o755)
    wt = make_session(repo)
    SessionStore(AppPaths.default().sessions_dir).create(
        SessionRecord(SID, str(repo), str(wt.path), wt.base_commit, task="t", model="m")
    )
    (wt.path / "a.txt").write_bytes(b"".join(b"LINE %d\n" % i for i in range(1, 41)))
    (wt.path / "b.txt").write_bytes(b"alpha\nBETA\ngamma\n")
    (wt.path / "tool.sh").write_bytes(b"#!/bin/sh\necho bye\n")  # content changes, mode kept
    (wt.path / "b.txt").chmod(0o755)  # a mode change on top of a text change
    (wt.path / "src" / "m.py").unlink()  # its folder empties and goes, as with git
    (wt.path / "new" / "deep").mkdir(parents=True)
    (wt.path / "new" / "deep" / "one.txt").write_bytes(b"one\n")
    (wt.path / "new" / "two.txt").write_bytes(b"two\n")
    (wt.path / "blob.bin").write_bytes(bytes(range(256)) * 8)
    (wt.path / "link").symlink_to("b.txt")
    (wt.path / "three.txt").write_bytes(b"3\n")


def _leftovers(repo: Path) -> list[str]:
    """Anything a transaction may leave behind: its journal, staging, half-written records."""
    session_dir = AppPaths.default().sessions_dir / SID
    found = [str(p) for p in (repo / ".git").glob(f"{STAGING_DIR}*")]
    found += [str(p) for p in session_dir.glob(JOURNAL_FILE)]
    found += [str(p) for p in (session_dir / "applies").glob(".tmp-*")]
    return found


def test_kill_at_every_apply_step_leaves_before_or_after_and_undo_restores(
    user_repo: Path, make_session: MakeSession, capsys: pytest.CaptureFixture[str]
) -> None:
    _session_with_every_kind_of_change(user_repo, make_session)
    before = repo_fingerprint(user_repo)
    clean = _frogdesk("apply", SID, "--all")
    assert clean.returncode == 0, clean.stderr
    after = repo_fingerprint(user_repo)
    assert after != before and _leftovers(user_repo) == []
    assert _frogdesk("undo", SID).returncode == 0
    assert repo_fingerprint(user_repo) == before

    points: dict[int, str] = {}
    outcomes: set[str] = set()
    step = 1
    while True:
        run = _frogdesk("apply", SID, "--all", kill_at=step)
        if run.returncode == 0:
            break  # past the last step: the apply ran to its end
        assert run.returncode == -9, run.stderr
        points[step] = re.findall(r"fault point \d+: (.*)", run.stderr)[0]
        capsys.readouterr()
        assert main(["sessions", "list"]) == 0  # any command recovers first
        said = capsys.readouterr().err
        state = repo_fingerprint(user_repo)
        assert state in (before, after), f"kill at {points[step]}: a mixed tree"
        assert _leftovers(user_repo) == [], points[step]
        outcome = "after" if state == after else "before"
        outcomes.add(outcome)
        if points[step] != "journal removed":  # with a journal, the next command says so
            assert "interrupted apply" in said and SID in said, points[step]
        if outcome == "after":
            assert main(["undo", SID]) == 0, capsys.readouterr().err
        else:
            assert main(["undo", SID]) == 2 and "nothing to undo" in capsys.readouterr().err
        assert repo_fingerprint(user_repo) == before, points[step]
        step += 1
    assert len(set(points.values())) >= 20, points
    assert any(p.startswith("staged") for p in points.values())
    assert any(p.startswith("renamed") for p in points.values())
    assert outcomes == {"before", "after"}


def test_kill_at_every_undo_step_leaves_before_or_after_and_undo_finishes(
    user_repo: Path, make_session: MakeSession, capsys: pytest.CaptureFixture[str]
) -> None:
    _session_with_every_kind_of_change(user_repo, make_session)
    before = repo_fingerprint(user_repo)
    assert _frogdesk("apply", SID, "--all").returncode == 0
    after = repo_fingerprint(user_repo)
    killed = 0
    step = 1
    while True:
        run = _frogdesk("undo", SID, kill_at=step)
        if run.returncode == 0:
            break
        assert run.returncode == -9, run.stderr
        killed += 1
        capsys.readouterr()
        assert main(["sessions", "list"]) == 0
        said = capsys.readouterr().err
        state = repo_fingerprint(user_repo)
        assert state in (before, after), run.stderr
        assert _leftovers(user_repo) == [], run.stderr
        if state == after:
            assert main(["undo", SID]) == 0
        elif "journal removed" not in run.stderr:
            assert "finished an interrupted undo" in said, run.stderr
        assert repo_fingerprint(user_repo) == before
        assert main(["apply", SID, "--all"]) == 0
        assert repo_fingerprint(user_repo) == after
        step += 1
    assert repo_fingerprint(user_repo) == before
    assert killed >= 10
