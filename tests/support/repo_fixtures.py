"""Fixtures for the worktree and sandbox tests: real git repositories, a fake user home outside
/tmp, and session worktrees."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from frogdesk.worktree.checkout import Worktree, create_worktree, discard_worktree
from tests.support.gitutil import git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with one commit, a dirty file, an untracked file and ignored content."""
    root = tmp_path / "user repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("hello\n")
    (root / ".gitignore").write_text(".venv\n*.log\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('v1')\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    (root / "src" / "app.py").write_text("print('v2, unstaged')\n")
    (root / "notes.txt").write_text("untracked\n")
    (root / "debug.log").write_text("ignored\n")
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / ".venv" / "marker").write_text("venv marker\n")
    return root


@pytest.fixture
def worktrees_dir(isolated_home: Path) -> Path:
    """Where FrogDesk keeps worktrees in this test (inside the isolated FROGDESK_HOME)."""
    return isolated_home / "data" / "worktrees"


@pytest.fixture
def worktree(repo: Path, worktrees_dir: Path) -> Iterator[Worktree]:
    """A session worktree of `repo`, discarded afterwards."""
    wt = create_worktree(repo, worktrees_dir, "session-1")
    yield wt
    if wt.path.exists():
        discard_worktree(wt)


@pytest.fixture
def outside_dir() -> Iterator[Path]:
    """A folder outside /tmp (which the bwrap sandbox replaces), so visibility tests mean something."""
    path = Path(tempfile.mkdtemp(prefix="frogdesk-test-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def user_home(outside_dir: Path) -> Path:
    """A fake home with credentials, an ordinary file and a toolchain folder (credentials in it too)."""
    home = outside_dir / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("SECRET-KEY-MATERIAL\n")
    (home / ".config" / "gh").mkdir(parents=True)
    (home / ".config" / "gh" / "hosts.yml").write_text("oauth_token: SECRET-GH-TOKEN\n")
    (home / ".netrc").write_text("machine example.com password SECRET-NETRC\n")
    (home / "notes.txt").write_text("ordinary notes\n")
    (home / ".cargo" / "bin").mkdir(parents=True)
    (home / ".cargo" / "bin" / "tool").write_text("toolchain file\n")
    (home / ".cargo" / "credentials.toml").write_text("token = 'SECRET-CARGO-TOKEN'\n")
    return home
