"""Paths resolved on descriptors: links inside followed (relative, absolute, chained, `..`),
links out refused with Leaf's text, `.git` refused for writes by name, case and link, and
judged by where the opened folder is, not by the names that led to it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from frogdesk.engine.chat import ToolCall
from frogdesk.leaf.errors import OutsideWorkdirError
from frogdesk.leaf.paths import check_writable, locate, opened_root
from frogdesk.leaf.runner import ToolRunner


def run(runner: ToolRunner, name: str, **args: str) -> str:
    return runner.run(ToolCall(name, args)).observation


@pytest.fixture
def linked(workdir: Path) -> Path:
    """in -> pkg (relative), abs -> pkg (absolute), chain -> in, sub/up -> .., out -> ..."""
    os.symlink("pkg", workdir / "in")
    os.symlink(workdir / "pkg", workdir / "abs")
    os.symlink("in", workdir / "chain")
    (workdir / "sub").mkdir()
    os.symlink("..", workdir / "sub" / "up")
    os.symlink("..", workdir / "out")
    os.symlink("../../outside", workdir / "pkg" / "away")
    return workdir


@pytest.mark.parametrize("via", ["in", "abs", "chain", "sub/up/pkg"])
def test_links_inside_are_followed_by_every_tool(
    runner: ToolRunner, linked: Path, via: str
) -> None:
    assert run(runner, "Read", file_path=f"{via}/mod.py") == f"{via}/mod.py\n1. x = 1\n2. y = 1"
    assert run(runner, "Write", file_path=f"{via}/new/f.txt", content="n") == (
        f"Wrote {via}/new/f.txt (1 bytes)."
    )
    assert (linked / "pkg" / "new" / "f.txt").read_text(encoding="utf-8") == "n"
    edit = run(runner, "Edit", file_path=f"{via}/data.txt", old_string="hello", new_string="hi")
    assert edit == f"Edited {via}/data.txt (1 replacement)."
    assert (linked / "pkg" / "data.txt").read_text(encoding="utf-8") == "hi\n"
    assert run(runner, "Glob", pattern="*.py", path=via) == f"{os.path.normpath(via)}/mod.py"
    for name in ("in", "abs", "chain", "out"):
        assert os.path.islink(linked / name)


@pytest.mark.parametrize("raw", ["out/outside/secret.txt", "pkg/away/secret.txt", "sub/up/out/x"])
@pytest.mark.parametrize("tool", ["Read", "Write", "Edit"])
def test_links_out_are_refused_with_leafs_text(
    runner: ToolRunner, linked: Path, raw: str, tool: str
) -> None:
    args = {"content": "pwned", "old_string": "secret", "new_string": "pwned"}
    assert run(runner, tool, file_path=raw, **args) == (
        f"OutsideWorkdirError: {raw} leads outside the repository workdir through a symlink"
    )
    outside = linked.parent / "outside"
    assert [p.name for p in outside.iterdir()] == ["secret.txt"]
    assert (outside / "secret.txt").read_text(encoding="utf-8") == "secret\n"
    assert not (linked / "pkg" / "new").exists()  # no folder made on the way out


def test_glob_through_a_link_out_is_refused(runner: ToolRunner, linked: Path) -> None:
    assert run(runner, "Glob", pattern="*", path="pkg/away") == (
        "OutsideWorkdirError: pkg/away leads outside the repository workdir through a symlink"
    )
    listed = run(runner, "Glob", pattern="**/*").split("\n")
    assert "in/mod.py" in listed and not any("secret" in line for line in listed)


@pytest.mark.parametrize(
    "raw", ["g/config", "sub/g2/config", "deep/x/.Git/config", ".GIT/config", "gitfile"]
)
@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_git_is_refused_through_links_and_in_any_case(
    runner: ToolRunner, workdir: Path, raw: str, tool: str
) -> None:
    (workdir / ".git").mkdir()
    (workdir / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    os.symlink(".git", workdir / "g")
    (workdir / "sub").mkdir()
    os.symlink("../g", workdir / "sub" / "g2")
    os.symlink(".git/config", workdir / "gitfile")
    (workdir / "deep").mkdir()
    os.symlink("..", workdir / "deep" / "x")
    args = {"content": "x", "old_string": "core", "new_string": "x"}
    assert run(runner, tool, file_path=raw, **args) == (
        f"OutsideWorkdirError: {raw} is inside .git, which tools may not modify"
    )
    assert os.listdir(workdir / ".git") == ["config"]
    assert (workdir / ".git" / "config").read_text(encoding="utf-8") == "[core]\n"
    # The control: Read through the same links works (only writes are refused).
    if raw in ("g/config", "gitfile"):
        assert run(runner, "Read", file_path=raw) == f"{raw}\n1. [core]"


def test_git_is_judged_by_where_the_opened_folder_is_now(workdir: Path) -> None:
    """A folder renamed into `.git` after the walk passed it is refused by its descriptor;
    the control: the same located folder left in place is writable."""
    (workdir / ".git").mkdir()
    (workdir / "sub").mkdir()
    with opened_root(workdir) as root:
        located = locate(root, "sub/f", "sub/f", refuse_git=True)
        try:
            check_writable(root, located, "sub/f")  # control: where it was walked
            os.rename(workdir / "sub", workdir / ".git" / "sub")
            with pytest.raises(OutsideWorkdirError, match=r"^sub/f is inside \.git"):
                check_writable(root, located, "sub/f")
        finally:
            os.close(located.parent)


def test_a_folder_moved_out_is_refused_by_its_descriptor(workdir: Path) -> None:
    (workdir / "sub").mkdir()
    with opened_root(workdir) as root:
        located = locate(root, "sub/f", "sub/f", refuse_git=True)
        try:
            os.rename(workdir / "sub", workdir.parent / "moved")
            with pytest.raises(OutsideWorkdirError, match="leads outside the repository workdir"):
                check_writable(root, located, "sub/f")
        finally:
            os.close(located.parent)


def test_a_link_loop_is_an_error_not_a_hang(runner: ToolRunner, workdir: Path) -> None:
    os.symlink("l2", workdir / "l1")
    os.symlink("l1", workdir / "l2")
    assert run(runner, "Read", file_path="l1").startswith(
        "OSError: [Errno 40] Too many levels of symbolic links"
    )
