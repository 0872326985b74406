"""FrogDesk's short-lived folders: in one folder per process under the user's `frogdesk-UID`,
never loose in the shared temp, and what a SIGKILLed process left there is removed by the next
command (a live process's is kept)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from frogdesk.cli import main
from frogdesk.paths import AppPaths
from frogdesk.scratch import scratch_folder, scratch_root, sweep_scratch, use_scratch
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.store import SessionStore
from tests.support.killpoint import run_frogdesk
from tests.support.review_helpers import MakeSession

SID = "scratch-1"


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("frogdesk-"))


def test_without_an_entry_point_a_folder_is_in_the_system_temp(tmp_path: Path) -> None:
    with scratch_folder("frogdesk-unit-") as folder:
        assert folder.parent == Path(tempfile.gettempdir()) and folder.is_dir()
    assert not folder.exists()


def test_under_an_entry_point_it_is_in_this_process_folder_removed_at_the_end(
    tmp_path: Path,
) -> None:
    with use_scratch(scratch_root(tmp_path)) as root:
        assert root == tmp_path / f"frogdesk-{os.getuid()}"
        assert root.stat().st_mode & 0o777 == 0o700
        with scratch_folder("frogdesk-unit-") as folder:
            mine = folder.parent
            assert mine.parent == root
            assert mine.name.startswith(f"{os.getpid()}-") and folder.is_dir()
            (folder / "left").write_text("x")
        assert mine.is_dir()  # the process folder stays while the process may use it
    assert not mine.exists() and list(root.iterdir()) == []
    with scratch_folder("frogdesk-unit-") as after:  # the entry point's end puts tempfile back
        assert after.parent == Path(tempfile.gettempdir())


def test_a_folder_of_that_name_not_this_users_alone_is_not_used(tmp_path: Path) -> None:
    root = scratch_root(tmp_path)
    root.mkdir(mode=0o777)
    root.chmod(0o777)  # others could write in it: not ours alone
    with use_scratch(root) as used, scratch_folder("frogdesk-unit-") as folder:
        assert used is None and folder.parent == Path(tempfile.gettempdir())
    root.rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    root.symlink_to(elsewhere)  # a link in its place is never followed
    with use_scratch(root) as used, scratch_folder("frogdesk-unit-") as folder:
        assert used is None and folder.parent == Path(tempfile.gettempdir())
    assert list(elsewhere.iterdir()) == []
    root.unlink()
    root.mkdir(mode=0o700)  # the control: a real folder of ours alone is used
    with use_scratch(root) as used, scratch_folder("frogdesk-unit-") as folder:
        assert used == root and folder.parent.parent == root


def test_the_sweep_removes_only_ended_processes_folders(tmp_path: Path) -> None:
    root = tmp_path / "scratch"
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], **_OUT)
    dead = root / f"{int(ended.stdout)}-0a1b2c3d"
    (dead / "frogdesk-review-x").mkdir(parents=True)
    (dead / "frogdesk-review-x" / "link").symlink_to(outside)
    alive = root / f"{os.getpid()}-0a1b2c3d"
    alive.mkdir()
    other = root / "not-a-process-folder"
    other.mkdir()
    assert sweep_scratch(root) == [dead]
    assert not dead.exists() and alive.is_dir() and other.is_dir()
    assert outside.read_text() == "keep me"  # the link was removed, never followed
    assert sweep_scratch(tmp_path / "missing") == []


_OUT: dict[str, object] = {"capture_output": True, "text": True, "check": True}


def test_a_killed_command_leaves_nothing_in_the_system_temp_and_the_next_one_sweeps(
    tmp_path: Path,
    user_repo: Path,
    make_session: MakeSession,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    system_temp = tmp_path / "system-temp"
    system_temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(system_temp))  # the children's
    monkeypatch.setattr(tempfile, "tempdir", str(system_temp))  # this process's
    wt = make_session(user_repo)
    SessionStore(AppPaths.default().sessions_dir).create(
        SessionRecord(SID, str(user_repo), str(wt.path), wt.base_commit, task="t", model="m")
    )
    (wt.path / "b.txt").write_bytes(b"alpha\nBETA\ngamma\n")
    root = scratch_root(system_temp)

    # killed while the review's temporary index folder exists: its removal never comes
    run = run_frogdesk(["review", SID], match=r"shutil\.rmtree .*frogdesk-review-")
    assert run.killed, run.stderr
    assert _leftovers(system_temp) == [root.name]  # nothing loose beside it
    left = [folder for folder in root.iterdir() if _leftovers(folder)]
    assert len(left) == 1, left
    assert "frogdesk-review-" in {n[:16] for n in _leftovers(left[0])}, _leftovers(left[0])

    # the control: the same SIGKILL in a process with no entry point (the old road: the
    # shared temp) leaves the folder where the check above looks
    code = (
        "import os, signal\n"
        "from frogdesk.scratch import scratch_folder\n"
        "with scratch_folder('frogdesk-review-'):\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    killed = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True)
    assert killed.returncode == -signal.SIGKILL
    loose = [name for name in _leftovers(system_temp) if name != root.name]
    assert [name[:16] for name in loose] == ["frogdesk-review-"]
    shutil.rmtree(system_temp / loose[0])

    # a live process's folder is kept while the next command sweeps the dead one
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = root / f"{sleeper.pid}-00ff00ff"
        live.mkdir()
        assert main(["sessions", "list"]) == 0
        assert not left[0].exists() and live.is_dir()
    finally:
        sleeper.kill()
        sleeper.wait()
    assert _leftovers(system_temp) == [root.name]  # the in-process command used it too
