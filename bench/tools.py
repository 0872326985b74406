"""Benchmark: the Glob tool's walker against Python's glob.glob on a generated big tree; prints JSON.

The tree has about 100k files in nested packages, hidden folders and a `.git` folder. For
each pattern both are timed (best of --repeat) and their answers compared: the walker
must return exactly glob.glob's files minus anything under `.git`.
"""

from __future__ import annotations

import argparse
import functools
import glob
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from frogdesk.engine.chat import ToolCall
from frogdesk.leaf.globwalk import glob_files
from frogdesk.leaf.runner import ToolRunner

PATTERNS = ["**/*.py", "src/**/*.txt", "*", "**/mod_1?.py", "src/pkg_1*/**/*.md", "**/README*"]


def make_tree(root: Path, n_files: int) -> int:
    """About n_files files: src/pkg_A/sub_B/{mod_N.py,data_N.txt,README.md}, plus .git and hidden dirs."""
    made = 0
    per_dir = 50
    dirs = max(1, n_files // per_dir)
    for d in range(dirs):
        folder = root / "src" / f"pkg_{d // 20}" / f"sub_{d % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(per_dir - 2):
            ext = "py" if i % 2 else "txt"
            (folder / f"mod_{i}.{ext}").write_bytes(b"")
        (folder / "README.md").write_bytes(b"")
        (folder / ".hidden.py").write_bytes(b"")
        made += per_dir
    for sub in (".git/objects/ab", ".venv/lib", "node_modules/x/.cache"):
        folder = root / sub
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(200):
            (folder / f"f{i}.py").write_bytes(b"")
            made += 1
    return made


def best_of(repeat: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    """The fastest of `repeat` runs and the last result."""
    best = float("inf")
    result: Any = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def reference(root: Path, pattern: str) -> list[str]:
    """glob.glob's files for the pattern, minus `.git`, sorted."""
    found = glob.glob(pattern, root_dir=root, recursive=True)
    return sorted(f for f in found if ".git" not in Path(f).parts and os.path.isfile(root / f))


def main() -> None:
    """Build the tree, time both, print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="frogdesk-bench-tools-"))
    try:
        n = make_tree(tmp, args.files)
        rows = []
        for pattern in PATTERNS:
            t_ref, ref = best_of(args.repeat, functools.partial(reference, tmp, pattern))
            t_ours, ours = best_of(
                args.repeat, functools.partial(glob_files, str(tmp), pattern, str(tmp))
            )
            rows.append(
                {
                    "pattern": pattern,
                    "matches": len(ours),
                    "identical": ours == ref,
                    "glob_glob_s": round(t_ref, 4),
                    "walker_s": round(t_ours, 4),
                    "speedup": round(t_ref / t_ours, 2) if t_ours > 0 else None,
                }
            )
        runner = ToolRunner(tmp, None)
        t_tool, observation = best_of(
            args.repeat, lambda: runner.run(ToolCall("Glob", {"pattern": "**/*.py"})).observation
        )
        print(
            json.dumps(
                {
                    "files": n,
                    "patterns": rows,
                    "all_identical": all(r["identical"] for r in rows),
                    "glob_tool_observation_s": round(t_tool, 4),
                    "glob_tool_observation_lines": observation.count("\n") + 1,
                },
                indent=2,
            )
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
