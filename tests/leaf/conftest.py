"""Fixtures of the Leaf tests: a small work directory and a runner over it."""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk.leaf.runner import ToolRunner
from tests.support.plain_shell import PlainShell


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A work directory with a few files, beside an `outside` folder the tools must not reach."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("one\ntwo\nthree\nfour\nfive\n", encoding="utf-8")
    (root / "pkg").mkdir()
    (root / "pkg" / "mod.py").write_text("x = 1\ny = 1\n", encoding="utf-8")
    (root / "pkg" / "data.txt").write_text("hello\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n", encoding="utf-8")
    return root


@pytest.fixture
def runner(workdir: Path) -> ToolRunner:
    """A tool runner over `workdir` with a plain shell."""
    return ToolRunner(workdir, PlainShell())
