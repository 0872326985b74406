"""`kill -9` a real `frogdesk apply` / `undo` before each of its file-changing operations.

After each kill, the next command's recovery must leave the user's repository exactly as
before or exactly as after (file bytes, permission bits, HEAD, refs, index), and `undo`
must then bring back exactly the state before; with --commit the commit goes and comes
back with the files. The kill points are every write, rename, removal, chmod and git
process of the run (see sigkill.py), not only the transaction's own steps.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from frogdesk.cli import main
from frogdesk.paths import AppPaths
from frogdesk.review.journal import JOURNAL_FILE, STAGING_DIR
from frogdesk.review.undo import latest_record
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.store import SessionStore
from tests.support.killpoint import run_frogdesk, trace
from tests.support.review_helpers import MakeSession, git

SID = "sigkill-1"
COMMIT = ["apply", SID, "--all", "--commit", "Apply the session"]


@pytest.fixture(autouse=True)
def fixed_commit_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same commit id on every run: a commit redone after a kill can be compared."""
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "T")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "t@example.invalid")
        monkeypatch.setenv(f"GIT_{who}_DATE", "2026-01-01T00:00:00Z")


def _session(repo: Path, make_session: MakeSession) -> None:
    """A session that changes an executable, a file with unusual bits, adds an executable
    and a symlink, and deletes a file; the user has a staged change of their own."""
    (repo / "tool.sh").write_bytes(b"#!/bin/sh\necho hi\n")
    (repo / "tool.sh").chmod(0o755)
    (repo / "b.txt").chmod(0o640)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tools")
    (repo / "a.txt").write_bytes(b"mine, staged\n")
    git(repo, "add", "a.txt")
    wt = make_session(repo)
    SessionStore(AppPaths.default().sessions_dir).create(
        SessionRecord(SID, str(repo), str(wt.path), wt.base_commit, task="t", model="m")
    )
    (wt.path / "tool.sh").write_bytes(b"#!/bin/sh\necho bye\n")
    (wt.path / "b.txt").write_bytes(b"alpha\nBETA\ngamma\n")
    (wt.path / "bin").mkdir()
    (wt.path / "bin" / "run.sh").write_bytes(b"#!/bin/sh\nexec true\n")
    (wt.path / "bin" / "run.sh").chmod(0o755)
    (wt.path / "link").symlink_to("b.txt")
    (wt.path / "src" / "m.py").unlink()
    assert main(["sessions", "list"]) == 0  # first-run setup done: every run counts the same ops


def repo_state(repo: Path) -> dict[str, str]:
    """Every working-tree entry (bytes and permission bits), HEAD, the refs and the index."""
    out: dict[str, str] = {}
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo).as_posix()
        if rel == ".git" or rel.startswith(".git/"):
            continue
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            out[rel] = "link:" + os.readlink(path)
        elif stat.S_ISREG(info.st_mode):
            digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
            out[rel] = f"{digest} {oct(stat.S_IMODE(info.st_mode))}"
        else:
            out[rel] = "dir"
    out["<HEAD>"] = (repo / ".git" / "HEAD").read_text(encoding="utf-8")
    out["<refs>"] = git(repo, "for-each-ref")
    out["<index>"] = git(repo, "ls-files", "-s")
    return out


def _differs(state: dict[str, str], *wanted: dict[str, str]) -> str:
    """Which entries of `state` are unlike each wanted state, for a failure message."""
    keys = [sorted(k for k in state.keys() | w.keys() if state.get(k) != w.get(k)) for w in wanted]
    return "; ".join(f"differs from state {i} in {k}" for i, k in enumerate(keys))


def _leftovers(repo: Path) -> list[str]:
    session_dir = AppPaths.default().sessions_dir / SID
    found = [str(p) for p in (repo / ".git").glob(f"{STAGING_DIR}*")]
    found += [str(p) for p in session_dir.glob(JOURNAL_FILE)]
    return found + [str(p) for p in (session_dir / "applies").glob(".tmp-*")]


def _recover(capsys: pytest.CaptureFixture[str]) -> str:
    """Run any command (it recovers first); what it told the user on stderr."""
    capsys.readouterr()
    assert main(["sessions", "list"]) == 0
    return capsys.readouterr().err.strip()


class Scene:
    """The repository, the session's worktrees and FrogDesk's home, saved and put back whole,
    so that every kill point starts from the same state whatever the one before left."""

    def __init__(self, tmp_path: Path, repo: Path) -> None:
        self.repo = repo
        self.parts = [repo, tmp_path / "worktrees", Path(os.environ["FROGDESK_HOME"])]
        self.saved = tmp_path / "saved"

    def save(self) -> None:
        shutil.rmtree(self.saved, ignore_errors=True)
        for i, part in enumerate(self.parts):
            shutil.copytree(part, self.saved / str(i), symlinks=True)

    def restore(self) -> None:
        for i, part in enumerate(self.parts):
            shutil.rmtree(part)
            shutil.copytree(self.saved / str(i), part, symlinks=True)


def _sweep(scene: Scene, args: list[str], check: Callable[[], None]) -> tuple[int, list[str]]:
    """Kill `frogdesk ARGS` before each of its operations in turn, each time from the saved
    scene, and run check() after each; the number of kill points and every failure."""
    failures: list[str] = []
    n = 1
    while True:
        scene.restore()
        run = run_frogdesk(args, kill_at=n)
        if not run.killed:
            assert run.returncode == 0, run.stderr
            return n - 1, failures
        try:
            check()
        except AssertionError as exc:
            failures.append(f"killed before {run.killed_before}: {exc}")
        n += 1


@pytest.mark.slow
def test_apply_killed_anywhere_keeps_exact_modes_and_undo_restores(
    tmp_path: Path,
    user_repo: Path,
    make_session: MakeSession,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _session(user_repo, make_session)
    scene = Scene(tmp_path, user_repo)
    scene.save()
    before = repo_state(user_repo)
    ops = trace(["apply", SID, "--all"])
    after = repo_state(user_repo)
    assert after["tool.sh"].endswith("0o755") and after["bin/run.sh"].endswith("0o755")
    assert after["b.txt"].endswith("0o640")

    def check() -> None:
        _recover(capsys)
        state = repo_state(user_repo)
        assert state in (before, after), _differs(state, before, after)
        assert _leftovers(user_repo) == []
        assert main(["undo", SID]) == (0 if state == after else 2)  # 2: nothing to undo
        assert repo_state(user_repo) == before, _differs(repo_state(user_repo), before)

    points, failures = _sweep(scene, ["apply", SID, "--all"], check)
    assert not failures, "\n".join(failures)
    assert points == len(ops) and any(op.startswith("os.chmod") for op in ops)


@pytest.mark.slow
def test_undo_killed_anywhere_keeps_exact_modes(
    tmp_path: Path,
    user_repo: Path,
    make_session: MakeSession,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _session(user_repo, make_session)
    before = repo_state(user_repo)
    assert main(["apply", SID, "--all"]) == 0
    after = repo_state(user_repo)
    scene = Scene(tmp_path, user_repo)
    scene.save()
    ops = trace(["undo", SID])

    def check() -> None:
        said = _recover(capsys)
        state = repo_state(user_repo)
        assert state in (before, after), _differs(state, before, after)
        assert _leftovers(user_repo) == []
        if state == after:
            assert main(["undo", SID]) == 0
        elif said:
            assert "finished an interrupted undo" in said, said
        assert repo_state(user_repo) == before, _differs(repo_state(user_repo), before)
        assert main(["undo", SID]) == 2  # the apply is undone, and says so

    points, failures = _sweep(scene, ["undo", SID], check)
    assert not failures, "\n".join(failures)
    assert points == len(ops)


@pytest.mark.slow
def test_apply_commit_killed_anywhere_then_undo_takes_the_commit_back(
    tmp_path: Path,
    user_repo: Path,
    make_session: MakeSession,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _session(user_repo, make_session)
    scene = Scene(tmp_path, user_repo)
    scene.save()
    before = repo_state(user_repo)
    ops = trace(COMMIT)
    after = repo_state(user_repo)
    commit = git(user_repo, "rev-parse", "HEAD").strip()
    assert after["<refs>"] != before["<refs>"]
    assert git(user_repo, "diff", "--cached", "--name-only").split() == ["a.txt"]  # still staged

    def check() -> None:
        said = _recover(capsys)
        state = repo_state(user_repo)
        assert state in (before, after), _differs(state, before, after)
        assert _leftovers(user_repo) == []
        assert len(said.splitlines()) <= 1, said
        if said and state == after:
            assert f"committed as {commit[:12]}" in said, said
        capsys.readouterr()
        assert main(["undo", SID]) == (0 if state == after else 2)
        if state == after:
            assert f"removed commit {commit[:12]}" in capsys.readouterr().out
        assert repo_state(user_repo) == before, _differs(repo_state(user_repo), before)

    points, failures = _sweep(scene, COMMIT, check)
    assert not failures, "\n".join(failures)
    assert points == len(ops)


@pytest.mark.slow
def test_undo_of_a_commit_killed_anywhere_converges_on_head_index_and_files(
    tmp_path: Path,
    user_repo: Path,
    make_session: MakeSession,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _session(user_repo, make_session)
    before = repo_state(user_repo)
    assert main(COMMIT) == 0
    after = repo_state(user_repo)
    scene = Scene(tmp_path, user_repo)
    scene.save()
    ops = trace(["undo", SID])

    def check() -> None:
        said = _recover(capsys)
        state = repo_state(user_repo)
        assert state in (before, after), _differs(state, before, after)
        assert _leftovers(user_repo) == []
        if state == after:
            assert main(["undo", SID]) == 0
        elif said:
            assert "finished an interrupted undo" in said and "removed commit" in said, said
        assert repo_state(user_repo) == before, _differs(repo_state(user_repo), before)
        capsys.readouterr()
        assert main(["undo", SID]) == 2, "the undone apply is offered again"

    points, failures = _sweep(scene, ["undo", SID], check)
    assert not failures, "\n".join(failures)
    assert points == len(ops)


def test_a_commit_cut_short_while_head_moved_on_is_recorded_as_not_made(
    tmp_path: Path,
    user_repo: Path,
    make_session: MakeSession,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Killed just before HEAD moves; the user commits before the next command: the files
    stay applied, HEAD and the index stay the user's, and the record and the user say so."""
    _session(user_repo, make_session)
    scene = Scene(tmp_path, user_repo)
    scene.save()
    ops = trace(COMMIT)
    scene.restore()
    [n] = [i for i, op in enumerate(ops, 1) if "update-ref" in op]
    assert run_frogdesk(COMMIT, kill_at=n).killed
    git(user_repo, "commit", "-q", "-m", "the user's own")
    mine = git(user_repo, "rev-parse", "HEAD").strip()
    index = git(user_repo, "ls-files", "-s")

    said = _recover(capsys)
    assert len(said.splitlines()) == 1 and "not committed" in said, said
    assert git(user_repo, "rev-parse", "HEAD").strip() == mine
    assert git(user_repo, "ls-files", "-s") == index
    assert (user_repo / "tool.sh").read_bytes() == b"#!/bin/sh\necho bye\n"
    found = latest_record(AppPaths.default().sessions_dir, SID)
    assert found is not None
    assert found[1].commit is None and "not committed" in found[1].commit_skipped
    assert main(["undo", SID]) == 0
    assert (user_repo / "tool.sh").read_bytes() == b"#!/bin/sh\necho hi\n"
    assert stat.S_IMODE((user_repo / "tool.sh").stat().st_mode) == 0o755
    assert git(user_repo, "rev-parse", "HEAD").strip() == mine
