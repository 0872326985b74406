"""Temp files of atomic writes that a kill left behind: swept once their writer is surely
gone, never while it may still be writing; staging in another folder leaves nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from frogdesk.durable import (
    WRITER_GRACE,
    WRITER_STALE,
    atomic_write_bytes,
    sweep_temps,
    sweep_tree,
    temp_name,
)


def _dead_pid() -> int:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


@pytest.fixture
def live_pid() -> Iterator[int]:
    """Another process that stays alive for the test."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc.pid
    proc.kill()
    proc.wait()


def _temp(folder: Path, target: str, pid: int, age: float) -> Path:
    path = folder / f".{target}.{pid}-0123abcd.tmp"
    path.write_bytes(b"half")
    then = time.time() - age
    os.utime(path, (then, then))
    return path


def test_only_temp_files_whose_writer_is_gone_are_swept(tmp_path: Path, live_pid: int) -> None:
    old = WRITER_GRACE + 30
    dead = _temp(tmp_path, "session.json", _dead_pid(), old)
    young = _temp(tmp_path, "record.json", _dead_pid(), 1)  # perhaps a writer we cannot see
    mine = _temp(tmp_path, "a.json", os.getpid(), old)  # perhaps another thread's write
    alive = _temp(tmp_path, "b.json", live_pid, old)
    reused = _temp(tmp_path, "c.json", live_pid, WRITER_STALE + 1)  # no write takes an hour
    assert sweep_temps(tmp_path) != []
    assert not dead.exists() and not reused.exists()
    assert young.exists() and mine.exists() and alive.exists()


def test_other_files_folders_and_links_are_never_swept(tmp_path: Path) -> None:
    pid, old = _dead_pid(), WRITER_STALE + 1
    plain = _temp(tmp_path, "x", pid, old).rename(tmp_path / "notes.tmp")
    other = _temp(tmp_path, "y", pid, old).rename(tmp_path / f".y.{pid}-zz.tmp")
    folder = tmp_path / f".z.{pid}-0123abcd.tmp"
    folder.mkdir()
    link = tmp_path / f".w.{pid}-0123abcd.tmp"
    link.symlink_to(plain)
    assert sweep_temps(tmp_path) == []
    assert plain.exists() and other.exists() and folder.is_dir() and link.is_symlink()


def test_a_write_sweeps_its_folder_and_a_tree_sweep_reaches_subfolders(tmp_path: Path) -> None:
    pid, old = _dead_pid(), WRITER_GRACE + 30
    left = _temp(tmp_path, "session.json", pid, old)
    atomic_write_bytes(tmp_path / "session.json", b"{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.json"]
    deep = tmp_path / "applies" / "1"
    deep.mkdir(parents=True)
    left = _temp(deep, "record.json", pid, old)
    too_deep = _temp(deep.parent, "x", pid, old)
    assert sweep_tree(tmp_path, 1) == [too_deep] and left.exists()
    assert sweep_tree(tmp_path, 2) == [left]
    assert sweep_tree(tmp_path / "missing", 2) == []  # never fails


def test_a_temp_staged_in_another_folder_replaces_the_file_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    target, staging = tmp_path / "work" / "calc.py", tmp_path / "private"
    target.parent.mkdir()
    staging.mkdir()
    target.write_bytes(b"old")
    target.chmod(0o755)
    atomic_write_bytes(target, b"new", temp_dir=staging)
    assert target.read_bytes() == b"new" and target.stat().st_mode & 0o777 == 0o755
    assert [p.name for p in target.parent.iterdir()] == ["calc.py"]
    assert list(staging.iterdir()) == []
    assert temp_name(target, staging).parent == staging
