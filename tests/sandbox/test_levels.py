"""Choosing the level, the none level's approval hook, and the root warning."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from frogdesk.engine.chat import ToolCall
from frogdesk.leaf.approval import CommandGate, approval_mode
from frogdesk.leaf.runner import ToolRunner
from frogdesk.sandbox.errors import SandboxError
from frogdesk.sandbox.levels import NONE_WARNING, ROOT_WARNING, choose_shell, detect
from frogdesk.sandbox.shells.bwrap import find_bwrap
from frogdesk.worktree.checkout import Worktree


def test_detect_auto_prefers_bwrap_when_it_works() -> None:
    level, reason = detect()
    if find_bwrap() is not None:
        assert level == "bwrap"
        assert "bubblewrap works" in reason
    else:
        assert level in ("landlock", "none")


def test_detect_falls_back_when_bwrap_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    import frogdesk.sandbox.levels as levels_mod

    monkeypatch.setattr(levels_mod, "find_bwrap", lambda: None)
    level, reason = detect("auto")
    assert level in ("landlock", "none")
    assert "bubblewrap (bwrap) is not installed" in reason
    with pytest.raises(SandboxError, match="sandbox = bwrap, but bubblewrap"):
        detect("bwrap")


def test_unknown_level_is_refused() -> None:
    with pytest.raises(SandboxError, match="unknown sandbox level 'docker'"):
        detect("docker")


def _bash(runner: ToolRunner, command: str) -> str:
    return runner.run(ToolCall("Bash", {"command": command})).observation


def test_none_level_asks_before_every_command(worktree: Worktree, user_home: Path) -> None:
    """Approval is the Bash tool's gate now; its default at the none level asks every time."""
    asked: list[str] = []

    def approve(command: str) -> bool:
        asked.append(command)
        return command.startswith("echo")

    choice = choose_shell("none", worktree=worktree, user_home=user_home)
    assert choice.level == "none"
    assert NONE_WARNING in choice.warnings
    gate = CommandGate(approval_mode("auto", choice.level), ask=approve)
    runner = ToolRunner(worktree.path, choice.shell, gate)
    assert _bash(runner, "echo approved > out.txt").startswith("Exit code: 0\n")
    assert (worktree.path / "out.txt").read_text() == "approved\n"
    declined = _bash(runner, "touch declined.txt")
    assert declined == "CommandDeclined: the user did not approve this command"
    assert not (worktree.path / "declined.txt").exists()
    assert asked == ["echo approved > out.txt", "touch declined.txt"]


def test_none_level_without_a_hook_runs_nothing(worktree: Worktree) -> None:
    choice = choose_shell("none", worktree=worktree)
    runner = ToolRunner(worktree.path, choice.shell, CommandGate(approval_mode("auto", "none")))
    assert _bash(runner, "touch ran.txt").startswith("CommandDeclined: ")
    assert not (worktree.path / "ran.txt").exists()


def test_none_level_still_clears_the_environment(
    worktree: Worktree, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "tok-NONE-LEVEL")
    choice = choose_shell("none", worktree=worktree)
    result = choice.shell.run("env", worktree.path, 30)
    assert "tok-NONE-LEVEL" not in result.stdout
    assert "HOME=" in result.stdout


def test_root_warning_matches_the_user(worktree: Worktree) -> None:
    choice = choose_shell("none", worktree=worktree)
    assert (ROOT_WARNING in choice.warnings) == (os.geteuid() == 0)


def test_shell_without_a_worktree_gets_a_private_workdir(tmp_path: Path) -> None:
    choice = choose_shell("auto", worktree=None, private_dir=tmp_path / "private")
    work = tmp_path / "private" / "work"
    result = choice.shell.run("echo ok > f && cat f", work, 30)
    assert result.stdout == "ok\n"


def test_bwrap_without_libseccomp_says_what_it_cannot_filter(
    worktree: Worktree, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    try:
        detect("bwrap")
    except SandboxError as exc:
        pytest.skip(str(exc))
    import frogdesk.sandbox.shells.bwrap as bwrap_mod

    def unusable(allowed: object) -> bytes:
        raise OSError("libseccomp.so.2: cannot open shared object file")

    monkeypatch.setattr(bwrap_mod, "seccomp_program", unusable)
    choice = choose_shell("bwrap", worktree=worktree, user_home=user_home)
    assert any("No seccomp filter" in w and "libseccomp.so.2" in w for w in choice.warnings)
    result = choice.shell.run("echo still-isolated", worktree.path, 30)
    assert (result.exit_code, result.stdout) == (0, "still-isolated\n")
