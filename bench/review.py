"""Benchmark: diff and apply of a 1,000-file change, against plain `git diff` / `git apply` (ratios).

`apply_*` is the apply as a user runs it (journal, undo record, staged and fsynced files);
`apply_unrecorded_*` is the same transaction without a session folder (no journal, no record).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from frogdesk.review.apply import apply_hunks
from frogdesk.review.diff import compute_diff
from frogdesk.worktree.checkout import create_worktree

T = TypeVar("T")


def _git(cwd: Path, *args: str, stdin: bytes | None = None) -> bytes:
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b"}
    env["GIT_COMMITTER_EMAIL"] = "b@b"
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        input=stdin,
        check=True,
        capture_output=True,
        env={**os.environ, **env},
    ).stdout


def _timed(fn: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def run(n_files: int, n_lines: int) -> dict[str, float | int]:
    """Build a repository and a session changing every file; time ours and git's."""
    with tempfile.TemporaryDirectory(prefix="frogdesk-bench-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        _git(repo, "init", "-q")
        for i in range(n_files):
            sub = repo / f"d{i % 20}"
            sub.mkdir(exist_ok=True)
            (sub / f"f{i}.txt").write_bytes(
                b"".join(b"file %d line %d\n" % (i, j) for j in range(n_lines))
            )
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "base")
        wt = create_worktree(repo, Path(tmp) / "wts", "bench")
        for i in range(n_files):
            path = wt.path / f"d{i % 20}" / f"f{i}.txt"
            data = path.read_bytes().replace(b" line 3\n", b" line three\n")
            path.write_bytes(data.replace(b" line %d\n" % (n_lines - 5), b" changed\n"))
        reference = repo.with_name("reference")
        shutil.copytree(repo, reference, symlinks=True)
        unrecorded = repo.with_name("unrecorded")
        shutil.copytree(repo, unrecorded, symlinks=True)
        session_dir = Path(tmp) / "sessions" / "bench"

        diff, diff_s = _timed(lambda: compute_diff(wt.path, wt.base_commit))
        patch, git_diff_s = _timed(lambda: _git(wt.path, "diff", "--binary"))
        ids = diff.hunk_ids()
        result, apply_s = _timed(
            lambda: apply_hunks(repo, wt.path, diff, ids, session_dir=session_dir, session_id="b")
        )
        assert result.applied, result.report()
        plain, unrecorded_s = _timed(lambda: apply_hunks(unrecorded, wt.path, diff, ids))
        assert plain.applied, plain.report()
        _, git_apply_s = _timed(lambda: _git(reference, "apply", stdin=patch))
        same = _git(repo, "diff", "--stat") == _git(reference, "diff", "--stat")
        return {
            "files": n_files,
            "hunks": len(ids),
            "diff_s": round(diff_s, 4),
            "git_diff_s": round(git_diff_s, 4),
            "diff_ratio": round(diff_s / git_diff_s, 2),
            "apply_s": round(apply_s, 4),
            "git_apply_s": round(git_apply_s, 4),
            "apply_ratio": round(apply_s / git_apply_s, 2),
            "apply_unrecorded_s": round(unrecorded_s, 4),
            "apply_unrecorded_ratio": round(unrecorded_s / git_apply_s, 2),
            "same_result_as_git_apply": int(same),
        }


def main() -> None:
    """Print one JSON object with timings and ratios to git's own commands."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--lines", type=int, default=60)
    args = parser.parse_args()
    print(json.dumps(run(args.files, args.lines), indent=2))


if __name__ == "__main__":
    main()
