"""SIGKILL FrogDesk while it removes a session whose model never loaded: once the session's
folder is renamed to its hidden staging name, no row is ever listed again, and the next
command's sweep leaves nothing behind."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.killpoint import killed_at, let_time_pass, run_frogdesk
from tests.support.scripted import make_repo

FORGET = re.compile(r"os\.rename \S*/sessions/[0-9][^/ ]* \S*/sessions/\.[^/ ]+$")


def _args(tmp_path: Path, name: str) -> tuple[list[str], Path]:
    case = tmp_path / name
    case.mkdir()
    model = case / "cut.gguf"
    model.write_bytes(b"GGUF\x03\x00")
    repo = make_repo(case)
    return ["run", "x", "--repo", str(repo), "--backend", "llama", "--model", str(model)], case


@pytest.mark.slow
def test_a_failed_start_killed_while_it_is_removed_leaves_no_row(tmp_path: Path) -> None:
    args, case = _args(tmp_path, "trace")
    ops = trace_failed(args, case / "home")
    start = next(n for n, op in enumerate(ops, 1) if FORGET.search(op))
    points = list(range(start + 1, len(ops) + 1))
    assert len(points) >= 3  # the removal's own steps (rmtree of the hidden folder)
    # The control: killed just before the rename, the session is still there to be listed.
    args, case = _args(tmp_path, "before")
    killed_at(args, case / "home", start)
    listed = run_frogdesk(["sessions", "list"], case / "home")
    assert listed.returncode == 0 and listed.stdout.strip() != "no sessions", listed
    for n in points:
        args, case = _args(tmp_path, f"case-{n}")
        home = case / "home"
        op = killed_at(args, home, n)
        listed = run_frogdesk(["sessions", "list"], home)
        assert listed.returncode == 0 and listed.stdout.strip() == "no sessions", (op, listed)
        let_time_pass(home, 120)
        assert run_frogdesk(["sessions", "list"], home).returncode == 0
        sessions = home / "data" / "sessions"
        left = sorted(p.name for p in sessions.iterdir()) if sessions.is_dir() else []
        assert left == [], (op, left)


def trace_failed(args: list[str], home: Path) -> list[str]:
    """The operations of a run that fails to load its model (exit 2), in order."""
    done = run_frogdesk(args, home, trace=True)
    assert done.returncode == 2, done.stderr
    return [
        m[1] for m in map(re.compile(r"OP [0-9]+: (.*)").fullmatch, done.stderr.splitlines()) if m
    ]
