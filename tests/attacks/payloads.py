"""The attacker's shell snippets, shared by the sandboxed runs and by their positive controls."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

PY = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
"""A Python the sandbox can run (the system one when there is one)."""


def evil_git_dir(marker: Path) -> str:
    """Bash that builds $TMPDIR/evil/.git whose config runs a clean filter touching marker."""
    return (
        # a complete git dir: objects of its own, not the session's private object store
        "unset GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES; "
        'evil="$TMPDIR/evil/.git"; rm -rf "$TMPDIR/evil"; git init -q "$TMPDIR/evil"; '
        f"printf '#!/bin/sh\\ntouch {marker}\\ncat\\n' > \"$TMPDIR/clean.sh\"; "
        'chmod +x "$TMPDIR/clean.sh"; '
        'git config -f "$evil/config" filter.pwn.clean "$TMPDIR/clean.sh"; '
        "echo '* filter=pwn' > \"$evil/info/attributes\"; "
    )


PLANTS = {
    "dot-git": 'printf "gitdir: %s\\n" "$evil" > .git',
    "commondir": 'printf "%s\\n" "$evil" > "$(git rev-parse --git-dir)/commondir"',
}
"""Ways to point FrogDesk's own git at the evil git dir (after evil_git_dir has run)."""


def worktree_config_plant(marker: Path) -> str:
    """Bash that defines the filter in the worktree's config.worktree and selects it in .gitattributes."""
    return (
        f"printf '#!/bin/sh\\ntouch {marker}\\ncat\\n' > \"$TMPDIR/clean.sh\"; "
        'chmod +x "$TMPDIR/clean.sh"; '
        'git config -f "$(git rev-parse --git-dir)/config.worktree" filter.pwn.clean "$TMPDIR/clean.sh"; '
        "echo '* filter=pwn' > .gitattributes"
    )


def plain_git_runs_payload(repo: Path, tmp: Path, plant: str, marker: Path) -> bool:
    """Positive control: in a plain `git worktree` of a throwaway repo, the plant makes plain
    `git add -A` (what FrogDesk ran before) execute the payload outside any sandbox."""
    scratch = tmp / "control"
    shutil.rmtree(scratch, ignore_errors=True)
    (scratch / "tmp").mkdir(parents=True)
    env = {**os.environ, "TMPDIR": str(scratch / "tmp")}
    subprocess.run(
        ["git", "worktree", "add", "-q", "--detach", str(scratch / "wt")],
        cwd=repo, env=env, check=True, capture_output=True,
    )  # fmt: skip
    try:
        (scratch / "wt" / "control-change.txt").write_text("x\n", encoding="utf-8")
        subprocess.run(["bash", "-c", plant], cwd=scratch / "wt", env=env, check=True)
        subprocess.run(["git", "add", "-A"], cwd=scratch / "wt", env=env, capture_output=True)
        return marker.exists()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        subprocess.run(["git", "worktree", "prune"], cwd=repo, capture_output=True)
        marker.unlink(missing_ok=True)
