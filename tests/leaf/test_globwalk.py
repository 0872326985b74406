"""The Glob walker gives glob.glob's answer (files only, .git excluded) on random trees."""

from __future__ import annotations

import glob
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frogdesk.leaf.globwalk import glob_files

NAMES = ["a", "b.py", ".h", ".git", "c.txt", "d", "x.py", "ab"]
PATTERNS = [
    "*",
    "*.py",
    "**/*.py",
    "**",
    "**/*",
    "a/**",
    "a/**/*.py",
    "*/*.py",
    "**/b.py",
    "d/*/x.py",
    ".*",
    "**/.*",
    "a*",
    "?.py",
    "[ab]*",
    "**/d/**",
    "*/**/*.txt",
    "a/b.py",
    "**/**/*.py",
    ".h/*",
    "**/.h/*",
]


def reference(root: Path, pattern: str) -> list[str]:
    found = glob.glob(pattern, root_dir=root, recursive=True)
    # os.path.join keeps a trailing slash ("d/" for a file d is not a file); Path would drop it.
    files = [f for f in found if os.path.isfile(os.path.join(root, f))]
    return sorted({f for f in files if ".git" not in Path(f).parts})


def build(root: Path, paths: list[tuple[str, ...]]) -> None:
    for parts in paths:
        target = root.joinpath(*parts)
        if any(p.is_file() for p in [root.joinpath(*parts[:i]) for i in range(1, len(parts))]):
            continue
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("x", encoding="utf-8")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    paths=st.lists(
        st.lists(st.sampled_from(NAMES), min_size=1, max_size=4).map(tuple), min_size=1, max_size=25
    ),
    pattern=st.sampled_from(PATTERNS),
)
def test_matches_glob_glob(
    tmp_path_factory: pytest.TempPathFactory, paths: list[tuple[str, ...]], pattern: str
) -> None:
    root = tmp_path_factory.mktemp("tree")
    build(root, paths)
    assert glob_files(str(root), pattern, str(root)) == reference(root, pattern)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_fixed_tree(tmp_path: Path, pattern: str) -> None:
    build(
        tmp_path,
        [
            ("a", "b.py"),
            ("a", "d", "x.py"),
            ("a", ".h", "b.py"),
            (".h", "c.txt"),
            (".git", "x.py"),
            ("d", "a", "x.py"),
            ("ab",),
            ("x.py",),
            ("d", "d", "c.txt"),
            ("a", ".git", "b.py"),
        ],
    )
    assert glob_files(str(tmp_path), pattern, str(tmp_path)) == reference(tmp_path, pattern)
