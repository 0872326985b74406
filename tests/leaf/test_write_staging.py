"""Write and Edit stage their temp file in the session's private folder, never in the worktree
(where review would see it after a crash); links inside the workdir keep pointing at files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import frogdesk.durable
from frogdesk.beneath import fd_path
from frogdesk.engine.chat import ToolCall
from frogdesk.leaf.runner import ToolRunner
from frogdesk.leaf.textfile import WRITES_DIR
from frogdesk.worktree.checkout import create_worktree, session_private_dir
from tests.support.plain_shell import PlainShell
from tests.support.scripted import make_repo


@pytest.fixture
def staged(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every temp file the atomic writes make, as they make it (by path or by descriptor)."""
    made: list[Path] = []
    write_new = frogdesk.durable.write_new

    def recording(path: Path, data: bytes, mode: int = 0o644) -> None:
        made.append(path)
        write_new(path, data, mode)

    write_new_at = frogdesk.durable.write_new_at

    def recording_at(dir_fd: int, name: str, data: bytes, mode: int = 0o644) -> None:
        # beside the target, by descriptor: where the kernel says that folder is
        made.append(Path(fd_path(dir_fd)) / name)
        write_new_at(dir_fd, name, data, mode)

    monkeypatch.setattr(frogdesk.durable, "write_new", recording)
    monkeypatch.setattr(frogdesk.durable, "write_new_at", recording_at)
    return made


def _call(runner: ToolRunner, name: str, **args: str) -> None:
    outcome = runner.run(ToolCall(name, args))
    assert outcome.ok, outcome.observation


def test_in_a_session_worktree_temp_files_go_to_its_private_folder(
    tmp_path: Path, staged: list[Path]
) -> None:
    wt = create_worktree(make_repo(tmp_path), tmp_path / "worktrees", "s1")
    (wt.path / "pkg").mkdir()
    (wt.path / "pkg" / "real.py").write_text("x = 1\n", encoding="utf-8")
    os.symlink("pkg/real.py", wt.path / "alias.py")
    runner = ToolRunner(wt.path, PlainShell())
    staged.clear()  # the worktree's own record

    _call(runner, "Write", file_path="pkg/new.py", content="y = 2\n")
    _call(runner, "Edit", file_path="alias.py", old_string="x = 1", new_string="x = 3")
    _call(runner, "Edit", file_path="calc.py", old_string="a - b", new_string="a + b")

    writes = session_private_dir(wt) / WRITES_DIR
    assert [p.parent for p in staged] == [writes] * 3
    assert os.readlink(wt.path / "alias.py") == "pkg/real.py"
    assert (wt.path / "pkg" / "real.py").read_text(encoding="utf-8") == "x = 3\n"
    assert "a + b" in (wt.path / "calc.py").read_text(encoding="utf-8")
    assert list(writes.iterdir()) == []


def test_a_record_forged_inside_the_worktree_does_not_move_the_staging(
    tmp_path: Path, staged: list[Path]
) -> None:
    wt = create_worktree(make_repo(tmp_path), tmp_path / "worktrees", "s1")
    inner = wt.path / "inner"
    inner.mkdir()
    fake = {"path": str(inner), "repo_root": "/", "name": "inner", "base_commit": "0"}
    fake |= {"git_dir": "/x", "common_dir": "/y"}
    (wt.path / "inner.frogdesk.json").write_text(json.dumps(fake), encoding="utf-8")
    os.symlink(tmp_path, wt.path / "inner.sandbox")  # would lead the temp file out
    staged.clear()  # the worktree's own record
    _call(ToolRunner(wt.path, PlainShell()), "Write", file_path="inner/f", content="z")
    assert [p.parent for p in staged] == [session_private_dir(wt) / WRITES_DIR]


def test_outside_a_session_worktree_the_temp_file_is_beside_the_target(
    tmp_path: Path, staged: list[Path]
) -> None:
    workdir = tmp_path / "plain"
    workdir.mkdir()
    _call(ToolRunner(workdir, PlainShell()), "Write", file_path="f.txt", content="z")
    assert [p.parent for p in staged] == [workdir]
    assert [p.name for p in workdir.iterdir()] == ["f.txt"]
