"""A hostile model cannot read FrogDesk's own folders, wherever they lie: another session's
transcript and worktree, the settings, the models, the cache of shared openings and the log.

Under the home they were hidden with it; here they lie outside it (`FROGDESK_HOME` on
/var/tmp, as a portable install or `XDG_DATA_HOME` on another disk puts them), where only
their own rule hides them. The session's own worktree, inside the same data folder, still
works. The positive control: the same command on the host reads every file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from frogdesk.paths import AppPaths
from frogdesk.scratch import scratch_root
from tests.attacks.harness import bash, run_attack
from tests.support.scripted import make_repo

OTHER = "OTHER-SESSION-SECRET"
MARKS = ("SECRET-SETTINGS", "SECRET-MODEL", "SECRET-OPENING", "SECRET-LOG", "SECRET-SCRATCH")


SCRATCH = f"{os.getpid()}-5ec7e7a1"
"""A process folder of `frogdesk.scratch` named for this (live) process, so no sweep takes it."""


@pytest.fixture(autouse=True)
def _scratch_cleared() -> Iterator[None]:
    """The planted process folder goes when the test ends; the root is made as FrogDesk
    makes it (0700), so the processes after this test still use it."""
    scratch_root().mkdir(mode=0o700, exist_ok=True)
    yield
    shutil.rmtree(scratch_root() / SCRATCH, ignore_errors=True)


def _plant(paths: AppPaths) -> dict[str, Path]:
    """One marked file in each of FrogDesk's folders, beside what a real session left there."""
    planted = {
        "SECRET-SETTINGS": paths.config_file,
        "SECRET-MODEL": paths.models_dir / "private.gguf",
        "SECRET-OPENING": paths.openings_dir / f"{'a' * 32}.opening",
        "SECRET-LOG": paths.log_file,
        # a merge's copy of the user's file, in the shared /tmp (readable at landlock)
        "SECRET-SCRATCH": scratch_root() / SCRATCH / "frogdesk-merge-x" / "ours",
    }
    for mark, path in planted.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as out:
            out.write(f"\n# {mark}\n")
    return planted


def test_the_shell_cannot_read_frogdesk_folders_outside_the_home(
    level: str, tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FROGDESK_HOME", str(outside / "frogdesk"))
    paths = AppPaths.default()
    for run in ("first", "second", "run-first", "run-2"):
        (tmp_path / run).mkdir()
    # A first session writes a secret into its worktree (kept for review) and transcript.
    first = run_attack(
        make_repo(tmp_path / "first"), [bash(f"echo {OTHER} > notes.txt; echo {OTHER}")],
        tmp_path / "run-first", level,
    )  # fmt: skip
    transcripts = list(paths.sessions_dir.glob(f"{first.session_id}/*.jsonl"))
    worktree_files = list(paths.worktrees_dir.glob("*/notes.txt"))
    assert transcripts and worktree_files, (transcripts, worktree_files)
    planted = [*_plant(paths).values(), *transcripts, *worktree_files]
    reads = "; ".join(f"cat '{p}' 2>/dev/null" for p in planted)
    command = (
        f"{reads}; ls -R '{outside / 'frogdesk'}' '{scratch_root()}' 2>/dev/null; "
        "echo MINE-OK > mine.txt && cat mine.txt && cat app.py"
    )
    second = run_attack(make_repo(tmp_path / "second"), [bash(command)], tmp_path / "run-2", level)
    seen = second.observations[0]
    for mark in (*MARKS, OTHER):
        assert mark not in seen, (mark, seen)
    # Nor can it list them: no other session's worktree or folder, no model, no opening.
    listed = [*(p.parent.name for p in worktree_files), first.session_id, "private.gguf"]
    for name in (*listed, f"{'a' * 32}.opening", "config.toml", "frogdesk.log", SCRATCH):
        assert name not in seen, (name, seen)
    # The session's own worktree, in the same data folder, is readable and writable.
    assert "MINE-OK" in seen, seen
    mine = [p for p in paths.worktrees_dir.glob("*/mine.txt") if p.read_text() == "MINE-OK\n"]
    assert mine, seen
    # The control: on the host the same command reads every file.
    done = subprocess.run(
        ["bash", "-c", reads], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    for mark in (*MARKS, OTHER):
        assert mark in done.stdout, (mark, done.stdout)
