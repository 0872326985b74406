"""End-to-end helpers for the invariant tests: a lived-in user repository, its full state, the CLI."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
from pathlib import Path

from tests.support.scripted import frogdesk, write_script

GIT_ENV = {
    "GIT_AUTHOR_NAME": "User",
    "GIT_AUTHOR_EMAIL": "user@example.invalid",
    "GIT_COMMITTER_NAME": "User",
    "GIT_COMMITTER_EMAIL": "user@example.invalid",
}

BIG_LINES = [f"line {i}\n" for i in range(1, 41)]
"""big.txt: forty lines, so edits near its top and its bottom are separate hunks."""


def git(repo: Path, *args: str) -> str:
    """Run git as the user would (their identity, their config), return stdout."""
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout


def make_user_repo(root: Path) -> Path:
    """A repository in the middle of someone's work.

    Two branches, a tag, packed refs, a stash entry, a hook, local config, a staged
    change, an unstaged change, an untracked file and ignored files.
    """
    repo = root / "user-repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "big.txt").write_text("".join(BIG_LINES), encoding="utf-8")
    (repo / "old.txt").write_text("to be deleted by the agent\n", encoding="utf-8")
    (repo / "app.py").write_text("def answer():\n    return 41\n", encoding="utf-8")
    (repo / ".gitignore").write_text("build/\n*.log\n", encoding="utf-8")
    (repo / "run.sh").write_text("#!/bin/sh\necho run\n", encoding="utf-8")
    (repo / "run.sh").chmod(0o755)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "first")
    git(repo, "tag", "v1")
    git(repo, "branch", "feature")
    git(repo, "pack-refs", "--all")
    (repo / "app.py").write_text("def answer():\n    return 40 + 2\n", encoding="utf-8")
    git(repo, "stash", "push", "-q", "-m", "user stash")
    git(repo, "config", "user.name", "Repo User")
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    hook.chmod(0o755)
    (repo / "staged.txt").write_text("staged but not committed\n", encoding="utf-8")
    git(repo, "add", "staged.txt")
    (repo / "app.py").write_text("def answer():\n    return 42  # unstaged\n", encoding="utf-8")
    (repo / "untracked.txt").write_text("nobody added me\n", encoding="utf-8")
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_bytes(b"\x00\x01ignored")
    (repo / "debug.log").write_text("ignored log\n", encoding="utf-8")
    return repo


def _entry(path: Path) -> str:
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return "link:" + os.readlink(path)
    if stat.S_ISDIR(info.st_mode):
        return f"dir:{oct(info.st_mode & 0o7777)}"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return f"file:{oct(info.st_mode & 0o7777)}:{digest}"


GROWS_ONLY = (".git/objects", ".git/worktrees")
"""What a session may add to the user's git dir: objects and its worktree's registration."""


def repo_state(repo: Path) -> dict[str, str]:
    """Every path of the repository (working files, ignored ones and all of .git) with its bytes.

    Only `.git/objects` and `.git/worktrees` are left out: sessions add objects and
    register their worktree there, which changes nothing the user sees.
    """
    out: dict[str, str] = {}
    for folder, dirs, files in os.walk(repo):
        here = Path(folder)
        for name in sorted(dirs + files):
            path = here / name
            rel = path.relative_to(repo).as_posix()
            if any(rel == g or rel.startswith(g + "/") for g in GROWS_ONLY):
                continue
            out[rel] = _entry(path)
        dirs[:] = [d for d in dirs if not (here / d).is_symlink()]
    out["<refs>"] = git(repo, "for-each-ref", "--format=%(refname) %(objectname)")
    out["<stash>"] = git(repo, "stash", "list", "--format=%H %s")
    out["<HEAD>"] = git(repo, "rev-parse", "HEAD") + git(repo, "symbolic-ref", "HEAD")
    return out


def changed_paths(before: dict[str, str], after: dict[str, str]) -> set[str]:
    """The keys whose value differs (or that exist on one side only)."""
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def call(name: str, **params: str) -> str:
    """One tool call in the Qwen3-Coder XML format the model writes."""
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


def reply(thought: str, *calls: str, answer: str = "") -> str:
    """A raw model reply: reasoning closed by </think>, then content and calls."""
    return f"{thought}\n</think>\n\n{answer}" + "\n".join(calls)


def run_script(
    repo: Path, replies: list[str], tmp: Path, *extra: str, task: str = "Do the task."
) -> tuple[subprocess.CompletedProcess[str], dict[str, object], dict[str, object]]:
    """`frogdesk run` on a script of replies: (process, JSON summary, trajectory)."""
    script = write_script(tmp / "script.jsonl", replies)
    out = tmp / "out"
    done = frogdesk(
        "run", task, "--repo", str(repo), "--script", str(script), "--output", str(out),
        "--json", *extra,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    summary: dict[str, object] = json.loads(done.stdout) if done.stdout.strip() else {}
    traj_file = out / "trajectory_seed-0.json"
    traj: dict[str, object] = (
        json.loads(traj_file.read_text(encoding="utf-8")) if traj_file.is_file() else {}
    )
    return done, summary, traj


def observations(traj: dict[str, object]) -> list[str]:
    """Every observation of a trajectory, in order."""
    steps = traj["steps"]
    assert isinstance(steps, list)
    return [o["observation"] for s in steps for o in s["observations"]]
