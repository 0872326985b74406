"""Glob's work is bounded: repeated `**`, symlinked folders and cancellation cannot make it hang."""

from __future__ import annotations

import glob
import os
import threading
from pathlib import Path

from frogdesk.engine.chat import ToolCall
from frogdesk.leaf.globwalk import glob_walk
from frogdesk.leaf.runner import ToolRunner

HANG_GUARD = 60.0
"""Seconds a call may take before the test calls it hung (the fixed walk takes milliseconds)."""


def glob_call(
    runner: ToolRunner, args: dict[str, str], cancel: threading.Event | None = None
) -> str:
    """The Glob observation, run in a thread so a walk that never ends fails the test."""
    out: list[str] = []
    worker = threading.Thread(
        target=lambda: out.append(runner.run(ToolCall("Glob", args), cancel).observation),
        daemon=True,
    )
    worker.start()
    worker.join(HANG_GUARD)
    assert out, f"Glob {args} did not end within {HANG_GUARD:.0f} s"
    return out[0]


def chain(root: Path, depth: int) -> Path:
    """A chain of nested folders (one `mkdir -p` for the model) with x.txt at the bottom."""
    deep = root.joinpath(*[f"d{i}" for i in range(depth)])
    deep.mkdir(parents=True)
    (deep / "x.txt").write_text("x")
    return deep


def test_repeated_double_stars_on_a_deep_chain(tmp_path: Path) -> None:
    """Eight `**` on 30 folders meant C(38, 8) (48 million) walks of the chain."""
    deep = chain(tmp_path, 30)
    expected = deep.relative_to(tmp_path).joinpath("x.txt").as_posix()
    runner = ToolRunner(tmp_path, None)
    assert glob_call(runner, {"pattern": "/".join(["**"] * 8) + "/x.txt"}) == expected
    assert glob_call(runner, {"pattern": "d0/**/*/**/*/**/x.txt"}) == expected
    # Controls: one `**`, and Python's own glob on a pattern it can still afford.
    assert glob_call(runner, {"pattern": "**/x.txt"}) == expected
    assert sorted(set(glob.glob("**/**/x.txt", root_dir=tmp_path, recursive=True))) == [expected]


def test_the_work_grows_with_the_tree_not_with_the_pattern(tmp_path: Path) -> None:
    chain(tmp_path, 30)
    single = glob_walk(str(tmp_path), "**/x.txt", str(tmp_path), budget=1_000)
    assert single.stopped is None and len(single.files) == 1
    for pattern in ("/".join(["**"] * 8) + "/x.txt", "*/**/*/**/*/**/x.txt"):
        walked = glob_walk(str(tmp_path), pattern, str(tmp_path), budget=1_000)
        assert walked == single, pattern


def symlink_clique(base: Path, n: int) -> None:
    """n folders, each holding f.txt and a link to every other one (all inside the repo)."""
    for i in range(n):
        (base / f"d{i}").mkdir(parents=True)
        (base / f"d{i}" / "f.txt").write_text("f")
    for i in range(n):
        for j in range(n):
            if i != j:
                os.symlink(f"../d{j}", base / f"d{i}" / f"l{j}")


def test_folders_linked_to_each_other_end_with_a_note(tmp_path: Path) -> None:
    """Every path through 9 linked folders is a distinct answer (about 9! of them)."""
    symlink_clique(tmp_path / "web", 9)
    runner = ToolRunner(tmp_path, None)
    out = glob_call(runner, {"pattern": "**/f.txt", "path": "web"}).split("\n")
    assert out[-1] == (
        "... Glob stopped after looking at 2,000,000 directory entries: more files may "
        "match (narrow the pattern or the path)"
    )
    assert (
        out[0] == "web/d0/f.txt" and out[-2].startswith("... ") and out[-2].endswith(" more files")
    )
    # Controls: a pattern that needs no walk through the links, and a plain alias.
    assert glob_call(runner, {"pattern": "web/d3/*.txt"}) == "web/d3/f.txt"
    links = [f"web/d1/l2/l{j}/f.txt" for j in range(9) if j != 2]
    assert glob_call(runner, {"pattern": "*/f.txt", "path": "web/d1/l2"}) == "\n".join(links)


def test_a_folder_linked_once_is_still_listed_under_both_names(tmp_path: Path) -> None:
    (tmp_path / "src" / "docs").mkdir(parents=True)
    (tmp_path / "src" / "docs" / "a.md").write_text("a")
    os.symlink("src/docs", tmp_path / "docs")
    found = glob_walk(str(tmp_path), "**/*.md", str(tmp_path))
    assert found.stopped is None
    assert found.files == ["docs/a.md", "src/docs/a.md"]
    assert found.files == sorted(glob.glob("**/*.md", root_dir=tmp_path, recursive=True))


def test_a_budget_stops_the_walk_with_what_it_found(tmp_path: Path) -> None:
    for i in range(50):
        (tmp_path / f"p{i:02d}").mkdir()
        (tmp_path / f"p{i:02d}" / "m.py").write_text("")
    everything = glob_walk(str(tmp_path), "**/*.py", str(tmp_path))
    assert everything.stopped is None and len(everything.files) == 50
    partial = glob_walk(str(tmp_path), "**/*.py", str(tmp_path), budget=200)
    assert partial.stopped == "after looking at 200 directory entries"
    # Folders are walked in name order, so what a stopped walk found is the first part.
    assert 0 < len(partial.files) < 50 and partial.files == everything.files[: len(partial.files)]


def test_glob_honours_the_runs_cancel_event(tmp_path: Path) -> None:
    """The loop's cancel and max_time reached only Bash; a long Glob ran on."""
    (tmp_path / "a.py").write_text("")
    runner = ToolRunner(tmp_path, None)
    stop = threading.Event()
    assert glob_call(runner, {"pattern": "**/*.py"}, stop) == "a.py"  # control: not set
    stop.set()
    assert glob_call(runner, {"pattern": "**/*.py"}, stop) == (
        "No files matched before Glob stopped because the run was stopped "
        "(narrow the pattern or the path)."
    )
