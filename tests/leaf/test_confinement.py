"""Read, Write, Edit and Glob cannot reach outside the workdir: `..`, absolute paths, symlinks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from frogdesk.engine.chat import ToolCall
from frogdesk.leaf.runner import ToolRunner


@pytest.fixture
def links(workdir: Path) -> Path:
    """A file symlink and a directory symlink leading outside, and one that stays inside."""
    outside = workdir.parent / "outside"
    os.symlink(outside / "secret.txt", workdir / "leak.txt")
    os.symlink(outside, workdir / "outdir")
    os.symlink(workdir / "pkg", workdir / "inner")
    return outside


def escapes(workdir: Path) -> list[str]:
    return [
        "../outside/secret.txt",
        "pkg/../../outside/secret.txt",
        str(workdir.parent / "outside" / "secret.txt"),
        "/etc/passwd",
        "leak.txt",
        "outdir/secret.txt",
        "outdir/new.txt",
    ]


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("Read", {}),
    ("Write", {"content": "pwned"}),
    ("Edit", {"old_string": "secret", "new_string": "pwned"}),
]


@pytest.mark.parametrize(("tool", "extra"), CALLS, ids=[c[0] for c in CALLS])
@pytest.mark.parametrize("index", range(7))
def test_file_tools_refuse_escapes(
    runner: ToolRunner, workdir: Path, links: Path, tool: str, extra: dict[str, Any], index: int
) -> None:
    raw = escapes(workdir)[index]
    out = runner.run(ToolCall(tool, {"file_path": raw, **extra})).observation
    assert out.startswith("OutsideWorkdirError: "), out
    assert raw in out
    assert (links / "secret.txt").read_text(encoding="utf-8") == "secret\n"
    assert not (links / "new.txt").exists()


def test_symlink_inside_is_allowed(runner: ToolRunner, links: Path) -> None:
    assert (
        runner.run(ToolCall("Read", {"file_path": "inner/mod.py"})).observation
        == "inner/mod.py\n1. x = 1\n2. y = 1"
    )


@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_git_dir_is_not_writable(runner: ToolRunner, workdir: Path, tool: str) -> None:
    (workdir / ".git").mkdir()
    (workdir / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    args = {"file_path": ".git/config", "content": "x", "old_string": "core", "new_string": "x"}
    out = runner.run(ToolCall(tool, args)).observation
    assert out == "OutsideWorkdirError: .git/config is inside .git, which tools may not modify"
    assert (workdir / ".git" / "config").read_text(encoding="utf-8") == "[core]\n"


@pytest.mark.parametrize(
    "args",
    [
        {"pattern": "*", "path": ".."},
        {"pattern": "*", "path": "/etc"},
        {"pattern": "*", "path": "outdir"},
        {"pattern": "../outside/*"},
        {"pattern": "/etc/*"},
    ],
)
def test_glob_refuses_escapes(runner: ToolRunner, links: Path, args: dict[str, Any]) -> None:
    assert runner.run(ToolCall("Glob", args)).observation.startswith("OutsideWorkdirError: ")


def test_glob_does_not_follow_or_list_links_leading_out(runner: ToolRunner, links: Path) -> None:
    out = runner.run(ToolCall("Glob", {"pattern": "**/*"})).observation.split("\n")
    assert "leak.txt" not in out
    assert not any(line.startswith("outdir/") for line in out)
    assert "inner/mod.py" in out and "pkg/mod.py" in out
    assert runner.run(ToolCall("Glob", {"pattern": "outdir/*"})).observation == "No files matched."


def test_glob_survives_a_symlink_loop(runner: ToolRunner, workdir: Path) -> None:
    os.symlink(workdir, workdir / "pkg" / "loop")
    out = runner.run(ToolCall("Glob", {"pattern": "**/mod.py"})).observation.split("\n")
    assert "pkg/mod.py" in out
    assert len(out) < 50


@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_git_dir_is_not_writable_through_a_link_or_another_case(
    runner: ToolRunner, workdir: Path, tool: str
) -> None:
    """`ln -s .git notes.txt` (one Bash call away) and `.GIT` name the same file: refused.
    The control: the same write through a link to an ordinary file goes through."""
    (workdir / ".git").write_text("gitdir: /the/real/admin/dir\n", encoding="utf-8")
    (workdir / "plain.txt").write_text("gitdir: plain\n", encoding="utf-8")
    os.symlink(".git", workdir / "notes.txt")
    os.symlink("plain.txt", workdir / "other.txt")
    (workdir / "sub").mkdir()
    args = {"content": "gitdir: /nowhere\n", "old_string": "gitdir:", "new_string": "gitdir: /x"}
    for raw in ("notes.txt", "sub/.GIT", "sub/../notes.txt"):
        out = runner.run(ToolCall(tool, {"file_path": raw, **args})).observation
        assert out == f"OutsideWorkdirError: {raw} is inside .git, which tools may not modify"
    assert (workdir / ".git").read_text(encoding="utf-8") == "gitdir: /the/real/admin/dir\n"
    assert not (workdir / "sub" / ".GIT").exists()
    out = runner.run(ToolCall(tool, {"file_path": "other.txt", **args})).observation
    assert not out.startswith("OutsideWorkdirError"), out
    assert (workdir / "plain.txt").read_text(encoding="utf-8") != "gitdir: plain\n"
