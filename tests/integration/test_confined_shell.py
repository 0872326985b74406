"""A shell confined to an arbitrary folder: the public call `frogdesk tool --workdir` uses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from frogdesk.sandbox.errors import SandboxError
from frogdesk.sandbox.levels import confined_shell, detect

LEVELS = ("bwrap", "landlock")


def _need(level: str) -> None:
    try:
        got, why = detect(level)
    except SandboxError as exc:
        pytest.skip(str(exc))
    if got != level:
        pytest.skip(why)


@pytest.mark.parametrize("level", LEVELS)
def test_writes_land_in_the_folder_and_nowhere_else(tmp_path: Path, level: str) -> None:
    _need(level)
    folder, outside = tmp_path / "work", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    choice = confined_shell(level, folder, private_dir=tmp_path / "private")
    assert choice.level == level and choice.shell.level == level
    inside = choice.shell.run("mkdir -p sub && echo fine > sub/ok.txt", folder, timeout=30)
    assert inside.exit_code == 0, inside.stderr
    assert (folder / "sub" / "ok.txt").read_text() == "fine\n"
    escape = choice.shell.run(f"echo pwned > {outside}/x.txt", folder, timeout=30)
    assert escape.exit_code != 0
    assert list(outside.iterdir()) == []
    # HOME is private, under private_dir, and writable
    home = choice.shell.run('echo hi > "$HOME/h" && echo "$HOME"', folder, timeout=30)
    assert home.exit_code == 0 and home.stdout.strip().startswith(str(tmp_path / "private"))


def test_a_missing_folder_or_unknown_level_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="not a folder"):
        confined_shell("auto", tmp_path / "nope")
    with pytest.raises(SandboxError, match="unknown sandbox level"):
        confined_shell("chroot", tmp_path)


@pytest.mark.parametrize("level", LEVELS)
def test_frogdesk_tool_bash_writes_its_own_workdir(tmp_path: Path, level: str) -> None:
    _need(level)
    folder, outside = tmp_path / "work", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()

    def tool(command: str) -> subprocess.CompletedProcess[str]:
        request = json.dumps({"tool": "Bash", "args": {"command": command}})
        return subprocess.run(
            [sys.executable, "-m", "frogdesk", "tool", "--workdir", str(folder),
             "--sandbox", level],
            input=request, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    done = tool("echo fine > ok.txt")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Exit code: 0\n")
    assert (folder / "ok.txt").read_text() == "fine\n"
    done = tool(f"echo pwned > {outside}/x.txt")
    assert not done.stdout.startswith("Exit code: 0\n")
    assert list(outside.iterdir()) == []
