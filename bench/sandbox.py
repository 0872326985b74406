"""Benchmark: create_worktree against `git worktree add`, and one Bash command per sandbox level before and after a change; prints JSON.

`python bench/sandbox.py [SIZES...]` times worktree creation; `python bench/sandbox.py
--shell [--before REV]` times one `true` command at each level, and `--tools` each file
tool (Read, Write, Edit, Glob) and the review's diff of a 1,000-file worktree, in this tree
and in the code base at REV (extracted with `git archive`), in the same run, and reports
the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from frogdesk.worktree.checkout import create_worktree, discard_worktree

BEFORE = "a110817"
"""The code base before the containment work (its last commit on main)."""

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


SHELL_TIMER = """
import json, os, statistics, subprocess, sys, tempfile, time
from pathlib import Path
from frogdesk.worktree.checkout import create_worktree
try:
    from frogdesk.sandbox.levels import choose_shell, detect
except ImportError:  # the layout before sandbox/select.py was renamed
    from frogdesk.sandbox.select import choose_shell, detect
    import frogdesk, frogdesk.sandbox.shell_landlock as old_landlock
    old_argv = old_landlock.supervisor_argv

    def supervisor_argv(command, confinement):
        # `python -I -m` would import the installed frogdesk, not the tree under test
        argv = old_argv(command, confinement)
        code = ("import sys; sys.path.insert(0, sys.argv[1]); "
                "from frogdesk.sandbox.supervisor import main; sys.exit(main(sys.argv[2:]))")
        return [argv[0], "-I", "-c", code, str(Path(frogdesk.__file__).parents[1]), argv[-1]]

    old_landlock.supervisor_argv = supervisor_argv
runs = int(sys.argv[1])
root = Path(tempfile.mkdtemp(prefix="frogdesk-bench-shell-"))
repo = root / "repo"
repo.mkdir()
ident = ["-c", "user.name=b", "-c", "user.email=b@b"]
subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
(repo / "f.txt").write_text("x\\n")
subprocess.run(["git", *ident, "add", "."], cwd=repo, check=True)
subprocess.run(["git", *ident, "commit", "-qm", "b"], cwd=repo, check=True)
wt = create_worktree(repo, root / "wts", "bench")
out = {}
for level in ("bwrap", "landlock"):
    try:
        detect(level)
    except Exception:
        continue
    shell = choose_shell(level, worktree=wt, private_dir=root / ("p-" + level)).shell
    for _ in range(3):
        shell.run("true", wt.path, 60)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        shell.run("true", wt.path, 60)
        times.append(time.perf_counter() - t0)
    out[level] = statistics.median(times)
print(json.dumps(out))
"""


TOOL_TIMER = """
import json, statistics, subprocess, sys, tempfile, time
from pathlib import Path
from frogdesk.leaf.tools import LeafTools
from frogdesk.review.diff import compute_diff
from frogdesk.worktree.checkout import create_worktree
runs = int(sys.argv[1])
root = Path(tempfile.mkdtemp(prefix="frogdesk-bench-tools-"))
repo = root / "repo"
ident = ["-c", "user.name=b", "-c", "user.email=b@b"]
for folder in range(20):
    sub = repo / f"pkg{folder}" / "inner"
    sub.mkdir(parents=True)
    for n in range(50):
        (sub / f"m{n}.py").write_text("".join(f"value_{i} = {i}\\n" for i in range(40)))
subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
subprocess.run(["git", *ident, "add", "."], cwd=repo, check=True)
subprocess.run(["git", *ident, "commit", "-qm", "b"], cwd=repo, check=True)
wt = create_worktree(repo, root / "wts", "bench")
tools = LeafTools(wt.path, None)
path = "pkg3/inner/m7.py"
calls = {
    "read": lambda i: tools.read({"file_path": path}),
    "write": lambda i: tools.write({"file_path": f"pkg5/inner/new{i % 7}.py", "content": "x = 1\\n" * 50}),
    "edit": lambda i: tools.edit({"file_path": path, "old_string": "value_3 =", "new_string": "value_3 ="}),
    "glob": lambda i: tools.glob({"pattern": "pkg1*/**/*.py"}),
    "snapshot": lambda i: compute_diff(wt.path, wt.base_commit),
}
out = {}
for name, call in calls.items():
    for i in range(2):
        call(i)
    times = []
    for i in range(runs if name != "snapshot" else max(runs // 5, 3)):
        t0 = time.perf_counter()
        call(i)
        times.append(time.perf_counter() - t0)
    out[name] = statistics.median(times)
print(json.dumps(out))
"""


def _time(timer: str, tree: Path, runs: int) -> dict[str, float]:
    """Run a timer script with the frogdesk package found in tree; its medians by name."""
    done = subprocess.run(
        [sys.executable, "-c", timer, str(runs)],
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return result


def _against_before(timer: str, before: str, runs: int) -> dict[str, dict[str, float]]:
    """The timer on the code at `before` and on this tree, alternated twice; best of each."""
    here = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix="frogdesk-bench-before-") as tmp:
        archive = subprocess.run(
            ["git", "archive", "--format=tar", before, "frogdesk"],
            cwd=here,
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        rounds = [(_time(timer, Path(tmp), runs), _time(timer, here, runs)) for _ in range(2)]
    out: dict[str, dict[str, float]] = {}
    for name in rounds[0][1]:
        old = min(r[0][name] for r in rounds if name in r[0])
        new = min(r[1][name] for r in rounds)
        out[name] = {"before_s": old, "after_s": new, "ratio_after_to_before": new / old}
    return out


def bench_tools(before: str, runs: int) -> dict[str, object]:
    """Each file tool (Read, Write, Edit, Glob) and the review's diff of 1,000 files."""
    calls = _against_before(TOOL_TIMER, before, runs)
    return {"benchmark": "sandbox.tools", "before": before, "runs": runs, "calls": calls}


def bench_shell(before: str, runs: int) -> dict[str, object]:
    """One `true` command at each level the machine has."""
    levels = _against_before(SHELL_TIMER, before, runs)
    return {"benchmark": "sandbox.shell", "before": before, "runs": runs, "levels": levels}


def main() -> None:
    """Worktree creation for the sizes given (default 1k, 10k, 50k files), or --shell; print JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sizes", nargs="*", type=int, default=[1000, 10000, 50000])
    parser.add_argument("--shell", action="store_true", help="time one Bash command per level")
    parser.add_argument(
        "--tools", action="store_true", help="time each file tool and the review's diff"
    )
    parser.add_argument("--before", default=BEFORE, help="the code base to compare against")
    parser.add_argument("--runs", type=int, default=20, help="commands timed per level and round")
    args = parser.parse_args()
    if args.shell:
        print(json.dumps(bench_shell(args.before, args.runs), indent=2))
        return
    if args.tools:
        print(json.dumps(bench_tools(args.before, args.runs), indent=2))
        return
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
