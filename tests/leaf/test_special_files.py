"""Read, Write and Edit refuse FIFOs, sockets, devices and directories instead of blocking."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from frogdesk.engine.chat import ToolCall
from frogdesk.leaf.runner import ToolRunner

EDIT_ARGS = {"old_string": "a", "new_string": "b"}
WRITE_ARGS = {"content": "written\n"}
TOOL_ARGS: dict[str, dict[str, Any]] = {"Read": {}, "Write": WRITE_ARGS, "Edit": EDIT_ARGS}


def make_fifo(path: Path) -> Iterator[None]:
    os.mkfifo(path)
    yield


def make_socket(path: Path) -> Iterator[None]:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    try:
        yield
    finally:
        server.close()


def make_char_device(path: Path) -> Iterator[None]:
    """A character device like /dev/zero (endless data), made with mknod; needs root."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("mknod of a character device needs root")
    yield


MAKERS: dict[str, Callable[[Path], Iterator[None]]] = {
    "fifo": make_fifo,
    "socket": make_socket,
    "char device": make_char_device,
}


@pytest.fixture(params=sorted(MAKERS))
def special(request: pytest.FixtureRequest, workdir: Path) -> Iterator[Path]:
    """A non-regular file named `special` in the workdir, of each kind in turn."""
    path = workdir / "special"
    yield from (path for _ in MAKERS[request.param](path))


def observe(runner: ToolRunner, tool: str, args: dict[str, Any]) -> tuple[str, bool]:
    outcome = runner.run(ToolCall(tool, args))
    return outcome.observation, outcome.ok


@pytest.mark.timeout(30)
@pytest.mark.parametrize("tool", sorted(TOOL_ARGS))
def test_special_file_is_refused_with_an_observation(
    runner: ToolRunner, special: Path, tool: str
) -> None:
    before = special.lstat()
    observation, ok = observe(runner, tool, {"file_path": "special", **TOOL_ARGS[tool]})
    assert not ok
    assert observation == "ValueError: special is not a regular file"
    after = special.lstat()
    assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode)
    assert after.st_ino == before.st_ino


@pytest.mark.timeout(30)
@pytest.mark.parametrize("tool", sorted(TOOL_ARGS))
def test_symlink_to_a_fifo_is_refused(runner: ToolRunner, workdir: Path, tool: str) -> None:
    os.mkfifo(workdir / "pkg" / "pipe")
    (workdir / "link").symlink_to(workdir / "pkg" / "pipe")
    observation, ok = observe(runner, tool, {"file_path": "link", **TOOL_ARGS[tool]})
    assert (observation, ok) == ("ValueError: link is not a regular file", False)


@pytest.mark.parametrize("tool", sorted(TOOL_ARGS))
def test_directory_keeps_the_is_a_directory_error(
    runner: ToolRunner, workdir: Path, tool: str
) -> None:
    observation, ok = observe(runner, tool, {"file_path": "pkg", **TOOL_ARGS[tool]})
    assert not ok
    assert observation.startswith("IsADirectoryError: [Errno 21] Is a directory: "), observation
    assert (workdir / "pkg" / "mod.py").read_text(encoding="utf-8") == "x = 1\ny = 1\n"


@pytest.mark.timeout(30)
def test_glob_lists_regular_files_only(runner: ToolRunner, workdir: Path) -> None:
    os.mkfifo(workdir / "pkg" / "pipe.py")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(workdir / "pkg" / "sock.py"))
        observation, ok = observe(runner, "Glob", {"pattern": "**/*.py"})
        exact, _ = observe(runner, "Glob", {"pattern": "pkg/pipe.py"})
    assert (observation, ok) == ("a.py\npkg/mod.py", True)
    assert exact == "No files matched."


def test_regular_files_still_work_beside_a_fifo(runner: ToolRunner, workdir: Path) -> None:
    os.mkfifo(workdir / "pipe")
    (workdir / "long.txt").write_text("a long line\n" * 3, encoding="utf-8")
    assert observe(runner, "Write", {"file_path": "long.txt", "content": "ab\r\n"}) == (
        "Wrote long.txt (4 bytes).",
        True,
    )
    assert (workdir / "long.txt").read_bytes() == b"ab\r\n"
    assert observe(runner, "Edit", {"file_path": "long.txt", **EDIT_ARGS}) == (
        "Edited long.txt (1 replacement).",
        True,
    )
    assert (workdir / "long.txt").read_bytes() == b"bb\r\n"
    assert observe(runner, "Read", {"file_path": "long.txt"}) == ("long.txt\n1. bb", True)
    assert observe(runner, "Write", {"file_path": "new/dir/f.txt", "content": "x"}) == (
        "Wrote new/dir/f.txt (1 bytes).",
        True,
    )


def test_missing_file_is_still_file_not_found(runner: ToolRunner) -> None:
    for tool in ("Read", "Edit"):
        observation, ok = observe(runner, tool, {"file_path": "nope.txt", **TOOL_ARGS[tool]})
        assert not ok
        assert observation.startswith("FileNotFoundError: [Errno 2] No such file or directory")


def test_frogdesk_tool_reads_a_fifo_without_hanging(workdir: Path) -> None:
    os.mkfifo(workdir / "pipe")
    done = subprocess.run(
        [sys.executable, "-m", "frogdesk", "tool", "--workdir", str(workdir)],
        input=json.dumps({"tool": "Read", "args": {"file_path": "pipe"}}),
        capture_output=True,
        text=True,
        timeout=120,  # a hang guard only
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.strip() == "ValueError: pipe is not a regular file"
