"""`frogdesk tool`: one call from stdin, the observation on stdout, Bash through the sandbox."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def tool(workdir: Path, request: object, *extra: str) -> subprocess.CompletedProcess[str]:
    payload = request if isinstance(request, str) else json.dumps(request)
    return subprocess.run(
        [sys.executable, "-m", "frogdesk", "tool", "--workdir", str(workdir), *extra],
        input=payload, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_read(workdir: Path) -> None:
    done = tool(workdir, {"tool": "Read", "args": {"file_path": "a.py", "limit": 2}})
    assert (done.returncode, done.stdout) == (0, "a.py\n1. one\n2. two")


def test_error_observation_exits_1(workdir: Path) -> None:
    done = tool(workdir, {"tool": "Read", "args": {"file_path": "../outside/secret.txt"}})
    assert done.returncode == 1
    assert (
        done.stdout
        == "OutsideWorkdirError: ../outside/secret.txt is outside the repository workdir"
    )


def test_unknown_tool_and_non_object_args(workdir: Path) -> None:
    assert tool(workdir, {"tool": "Zap", "args": {}}).stdout == "Unknown tool: Zap"
    assert (
        tool(workdir, {"tool": "Glob", "args": ["*"]}).stdout == "ValueError: pattern is required"
    )


@pytest.mark.parametrize("bad", ["not json", "[1]", '{"args": {}}'])
def test_bad_stdin_is_a_user_error(workdir: Path, bad: str) -> None:
    done = tool(workdir, bad)
    assert (
        done.returncode == 2
        and done.stderr.startswith("frogdesk: ")
        and "Traceback" not in done.stderr
    )


def test_bash_runs_sandboxed_in_workdir(workdir: Path) -> None:
    from frogdesk.sandbox.levels import detect

    level, _ = detect("auto")
    if level == "none":
        pytest.skip("no sandbox here")
    done = tool(
        workdir,
        {
            "tool": "Bash",
            "args": {
                "command": "pwd; echo made > made.txt; cat ../outside/secret.txt >/dev/null 2>&1 || echo hidden"
            },
        },
    )
    assert done.returncode == 0
    assert done.stdout.startswith(f"Exit code: 0\nSTDOUT:\n{workdir}\n")
    assert (workdir / "made.txt").read_text() == "made\n"


def test_leafs_payload_shape_from_a_file_and_from_stdin(workdir: Path, tmp_path: Path) -> None:
    payload = {
        "tool": "Read",
        "arguments": {"file_path": "a.py", "offset": 9},
        "workdir": str(workdir),
    }
    (tmp_path / "call.json").write_text(json.dumps(payload))
    from_file = subprocess.run(
        [sys.executable, "-m", "frogdesk", "tool", str(tmp_path / "call.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (from_file.returncode, from_file.stdout) == (0, "a.py\n")  # offset past the end
    from_stdin = subprocess.run(
        [sys.executable, "-m", "frogdesk", "tool"],
        input=json.dumps({**payload, "arguments": {"file_path": "a.py", "limit": 1}}),
        capture_output=True,
        text=True,
        check=False,
    )
    assert (from_stdin.returncode, from_stdin.stdout) == (0, "a.py\n1. one")
    no_dir = subprocess.run(
        [sys.executable, "-m", "frogdesk", "tool"],
        input=json.dumps({"tool": "Read", "args": {"file_path": "a.py"}}),
        capture_output=True,
        text=True,
        check=False,
    )
    assert no_dir.returncode == 2 and "no workdir" in no_dir.stderr
