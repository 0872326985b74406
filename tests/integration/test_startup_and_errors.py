"""Startup hygiene (stale worktree records pruned) and model errors as one line, exit 2."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from frogdesk import config
from frogdesk.paths import AppPaths
from frogdesk.sessions.parts import STALE_AFTER
from frogdesk.sessions.service import SessionService
from frogdesk.worktree.checkout import SIDECAR_SUFFIX, create_worktree, load_worktree
from tests.support.scripted import frogdesk, make_repo


def _settings(paths: AppPaths) -> config.Settings:
    return config.load(paths.config_file, environ={})


def _age(sidecar: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(sidecar, (then, then))


def test_the_service_prunes_stale_records_and_keeps_live_and_young_ones(tmp_path: Path) -> None:
    paths = AppPaths.default()
    repo = make_repo(tmp_path)
    live = create_worktree(repo, paths.worktrees_dir, "live")
    crashed = create_worktree(repo, paths.worktrees_dir, "crashed")
    young = create_worktree(repo, paths.worktrees_dir, "young")
    for wt in (crashed, young):
        # a crash: the folder is gone, the record and git's registration stay
        for child in sorted(wt.path.rglob("*"), reverse=True):
            child.unlink() if not child.is_dir() or child.is_symlink() else child.rmdir()
        wt.path.rmdir()
    for name in ("live", "crashed"):
        _age(paths.worktrees_dir / (name + SIDECAR_SUFFIX), STALE_AFTER + 60)
    (paths.worktrees_dir / ("garbled" + SIDECAR_SUFFIX)).write_text("{not json")
    _age(paths.worktrees_dir / ("garbled" + SIDECAR_SUFFIX), STALE_AFTER + 60)

    service = SessionService(paths, _settings(paths))
    assert sorted(service.pruned) == ["crashed", "garbled"]
    assert not (paths.worktrees_dir / ("crashed" + SIDECAR_SUFFIX)).exists()
    assert load_worktree(paths.worktrees_dir, "live").path == live.path
    # too young to be sure it is not being created right now
    assert (paths.worktrees_dir / ("young" + SIDECAR_SUFFIX)).exists()
    assert SessionService(paths, _settings(paths), prune=False).pruned == []


def test_pruning_never_blocks_startup(tmp_path: Path) -> None:
    paths = AppPaths.default()
    paths.worktrees_dir.parent.mkdir(parents=True, exist_ok=True)
    paths.worktrees_dir.write_text("a file where the folder should be")
    assert SessionService(paths, _settings(paths)).pruned == []


def _one_line_exit_2(args: list[str], must_say: str) -> None:
    done = frogdesk(*args, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr and must_say in lines[0]
    assert lines[0].startswith("frogdesk: ")
    paths = AppPaths.default()
    # refused before anything was made for it
    assert not paths.sessions_dir.exists() or not any(paths.sessions_dir.iterdir())
    assert not paths.worktrees_dir.exists() or not any(paths.worktrees_dir.iterdir())


def test_an_unknown_model_is_one_line_and_exit_2(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    _one_line_exit_2(
        ["run", "fix it", "--repo", str(repo), "--backend", "llama",
         "--model", "nonexistent/Repo:Q4_K_M"],
        "frogdesk models pull nonexistent/Repo:Q4_K_M",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("content", "says"),
    [(b"GGUF\x03\x00", "cut short"), (b"PK\x03\x04 a zip file", "GGUF")],
)
def test_a_broken_model_file_is_one_line_and_exit_2(
    tmp_path: Path, content: bytes, says: str
) -> None:
    repo = make_repo(tmp_path)
    model = tmp_path / "broken.gguf"
    model.write_bytes(content)
    done = frogdesk(
        "run", "fix it", "--repo", str(repo), "--backend", "llama", "--model", str(model),
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("frogdesk: ") and says in lines[0]
    paths = AppPaths.default()
    # a session whose model never loaded leaves no row (and no folder)
    assert SessionService(paths, _settings(paths)).store.list() == []
    assert not paths.sessions_dir.exists() or not any(paths.sessions_dir.iterdir())
    assert not paths.worktrees_dir.exists() or not any(paths.worktrees_dir.iterdir())


def test_a_missing_model_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    _one_line_exit_2(
        ["run", "x", "--repo", str(repo), "--backend", "llama",
         "--model", str(tmp_path / "nothere.gguf")],
        "no such model file",
    )  # fmt: skip
