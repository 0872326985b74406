"""Benchmark: moving sandbox-written git objects into the user's store, against git writing them."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path


def _git(repo: Path, *args: str) -> None:
    ident = ["-c", "user.name=Bench", "-c", "user.email=bench@localhost"]
    subprocess.run(["git", *ident, *args], cwd=repo, check=True, capture_output=True)


def main() -> int:
    """Time sync_objects on N fresh loose objects and an empty command with and without sync; print JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--objects", type=int, default=500)
    parser.add_argument("--commands", type=int, default=20)
    args = parser.parse_args()

    from frogdesk.sandbox.levels import choose_shell, detect
    from frogdesk.worktree.checkout import create_worktree
    from frogdesk.worktree.objects import ObjectRoute, sync_objects

    base = Path(tempfile.mkdtemp(prefix="frogdesk-bench-", dir="/var/tmp"))
    try:
        repo = base / "repo"
        repo.mkdir()
        _git(repo, "init", "-q")
        (repo / "f").write_text("x\n")
        _git(repo, "add", "f")
        _git(repo, "commit", "-qm", "init")
        route = ObjectRoute(private=base / "private", git_dir=repo / ".git")
        route.prepare()
        inputs = []
        for i in range(args.objects):
            path = base / f"input-{i}"
            path.write_text(f"line {i}\n" * 50)
            inputs.append(str(path))
        started = time.monotonic()
        subprocess.run(
            ["git", "hash-object", "-w", *inputs],
            cwd=repo,
            env={**os.environ, **route.env()},
            check=True,
            capture_output=True,
        )
        git_write = time.monotonic() - started
        started = time.monotonic()
        report = sync_objects(route)
        sync = time.monotonic() - started
        result: dict[str, object] = {
            "objects": report.loose,
            "git_write_s": round(git_write, 4),
            "sync_s": round(sync, 4),
            "sync_over_git_write": round(sync / git_write, 2),
        }

        level, _ = detect("auto")
        if level != "none":
            wt = create_worktree(repo, base / "worktrees", "bench")
            choice = choose_shell(level, worktree=wt, user_home=base)
            policy = choice.shell.policy  # type: ignore[attr-defined]
            bare = dataclasses.replace(policy, objects=None)
            plain = choose_shell(level, worktree=wt, user_home=base).shell
            plain.policy = bare  # type: ignore[attr-defined]
            timings = {}
            for name, shell in (("with_sync", choice.shell), ("without_sync", plain)):
                started = time.monotonic()
                for _ in range(args.commands):
                    shell.run("true", wt.path, 60)
                timings[name] = (time.monotonic() - started) / args.commands
            result.update(
                level=level,
                empty_command_with_sync_ms=round(timings["with_sync"] * 1000, 2),
                empty_command_without_sync_ms=round(timings["without_sync"] * 1000, 2),
                empty_command_ratio=round(timings["with_sync"] / timings["without_sync"], 3),
            )
        print(json.dumps(result, indent=2))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
