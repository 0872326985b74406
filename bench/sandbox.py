"""Benchmark: `git worktree add` and FrogDesk's create_worktree against repository size; prints JSON."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from frogdesk.sandbox.worktree import create_worktree, discard_worktree

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args], cwd=repo, env={**os.environ, **GIT_ENV}, check=True, capture_output=True
    )


def make_repo(root: Path, n_files: int) -> Path:
    """A committed repository of n_files small files in 100-file folders, plus a dirty file."""
    repo = root / f"repo-{n_files}"
    repo.mkdir()
    _git(repo, "init", "-q")
    for i in range(n_files):
        folder = repo / f"pkg{i // 100}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{i}.py").write_text(f"VALUE = {i}\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "bench")
    (repo / "pkg0" / "mod0.py").write_text("VALUE = 'dirty'\n")
    return repo


def measure(repo: Path, work: Path) -> dict[str, float]:
    """Seconds for a plain `git worktree add` of HEAD, and for create_worktree (snapshot + add)."""
    plain = work / "plain"
    t0 = time.perf_counter()
    _git(repo, "worktree", "add", "-q", "--detach", str(plain), "HEAD")
    git_add = time.perf_counter() - t0
    _git(repo, "worktree", "remove", "--force", str(plain))
    t0 = time.perf_counter()
    wt = create_worktree(repo, work / "ours", "bench")
    ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    discard_worktree(wt)
    discard = time.perf_counter() - t0
    return {"git_worktree_add_s": git_add, "create_worktree_s": ours, "discard_s": discard}


def main() -> None:
    """Run the sizes given on the command line (default 1k, 10k, 50k files) and print JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sizes", nargs="*", type=int, default=[1000, 10000, 50000])
    args = parser.parse_args()
    results = []
    root = Path(tempfile.mkdtemp(prefix="frogdesk-bench-"))
    try:
        for n in args.sizes:
            repo = make_repo(root, n)
            timings = measure(repo, root / f"work-{n}")
            timings["ratio_ours_to_git"] = (
                timings["create_worktree_s"] / timings["git_worktree_add_s"]
            )
            results.append({"files": n, **timings})
            shutil.rmtree(repo)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps({"benchmark": "sandbox.worktree", "results": results}, indent=2))


if __name__ == "__main__":
    main()
