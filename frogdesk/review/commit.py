"""Committing exactly the applied files (leaving everything else staged alone), and taking it back."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from frogdesk.review.gitcmd import GitError, git_out, run_git


def commit_paths(repo_root: Path, paths: Sequence[str], message: str) -> str:
    """Commit the working-tree state of paths on top of HEAD and return the new commit id.

    The commit is built in a temporary index from HEAD, so other staged changes stay
    staged and uncommitted; afterwards the real index entries of paths match the commit.
    """
    head_proc = run_git(repo_root, ["rev-parse", "--verify", "-q", "HEAD"], ok_codes=(0, 1))
    head = head_proc.stdout.decode().strip() if head_proc.returncode == 0 else ""
    # Names the sandbox chose: `*` or `:(glob)...` read as pathspecs would reach the user's
    # other files (their unfinished edits committed, their staged versions reset).
    specs = [f":(literal){p}" for p in paths]
    with tempfile.TemporaryDirectory(prefix="frogdesk-commit-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        if head:
            git_out(repo_root, ["read-tree", head], env=env)
        git_out(repo_root, ["add", "-A", "--", *specs], env=env, neutral=False)
        tree = git_out(repo_root, ["write-tree"], env=env).decode().strip()
    parents = ["-p", head] if head else []
    commit = git_out(repo_root, ["commit-tree", tree, *parents, "-m", message]).decode().strip()
    update = ["update-ref", "-m", "frogdesk apply", "HEAD", commit]
    if head:
        update.append(head)
    git_out(repo_root, update)
    # The commit exists either way; a stale index entry would only show in `git status`.
    with contextlib.suppress(GitError):
        git_out(repo_root, ["reset", "-q", "--", *specs])
    return commit


IndexEntries = dict[str, list[str]]
"""Index entries per path: `MODE SHA STAGE` strings as `git ls-files -s` prints them ([]: absent)."""

_NO_SHA = "0" * 40


def index_entries(repo_root: Path, paths: Sequence[str]) -> IndexEntries:
    """The index entries of `paths` right now (taken before a commit, so undo can restore them)."""
    out: IndexEntries = {p: [] for p in paths}
    if not paths:
        return out
    specs = [f":(literal){p}" for p in paths]
    raw = git_out(repo_root, ["ls-files", "-s", "-z", "--", *specs])
    for item in raw.split(b"\0"):
        if not item:
            continue
        meta, _, name = item.partition(b"\t")
        path = name.decode("utf-8", "surrogateescape")
        if path in out:
            out[path].append(meta.decode())
    return out


def tree_entries(repo_root: Path, commit: str, paths: Sequence[str]) -> IndexEntries:
    """The entries `paths` have in `commit`'s tree, as stage-0 index entries."""
    out: IndexEntries = {p: [] for p in paths}
    if not paths:
        return out
    specs = [f":(literal){p}" for p in paths]
    raw = git_out(repo_root, ["ls-tree", "-z", "--full-tree", commit, "--", *specs])
    for item in raw.split(b"\0"):
        if not item:
            continue
        meta, _, name = item.partition(b"\t")
        mode, _kind, sha = meta.decode().split()
        path = name.decode("utf-8", "surrogateescape")
        if path in out:
            out[path].append(f"{mode} {sha} 0")
    return out


@dataclass(frozen=True)
class Uncommitted:
    """The outcome of taking an apply's commit back: done, or why it was left."""

    done: bool
    message: str


def uncommit(repo_root: Path, commit: str, index_before: Mapping[str, list[str]]) -> Uncommitted:
    """Move HEAD (and its branch) from `commit` back to its parent and restore the index
    entries of the committed paths, when nothing moved on since; otherwise change nothing.

    The ref moves with `update-ref` guarded by its old value, so a commit made meanwhile is
    never lost; the index entries go back only when they still are what the commit left.
    """
    short = commit[:12]
    head = run_git(repo_root, ["rev-parse", "--verify", "-q", "HEAD"], ok_codes=(0, 1))
    now = head.stdout.decode().strip()
    if now != commit:
        return Uncommitted(
            False, f"commit {short} stays: HEAD moved on to {now[:12] or 'nothing'} since the apply"
        )
    symbolic = run_git(repo_root, ["symbolic-ref", "-q", "HEAD"], ok_codes=(0, 1))
    ref = symbolic.stdout.decode().strip() or "HEAD"
    paths = list(index_before)
    if index_entries(repo_root, paths) != tree_entries(repo_root, commit, paths):
        return Uncommitted(
            False, f"commit {short} stays: the index of its files changed since the apply"
        )
    parent = run_git(repo_root, ["rev-parse", "--verify", "-q", f"{commit}^"], ok_codes=(0, 1))
    parent_id = parent.stdout.decode().strip()
    guard = ["-m", "frogdesk undo"]
    moved = run_git(
        repo_root,
        ["update-ref", *guard, ref, parent_id, commit]
        if parent_id
        else ["update-ref", *guard, "-d", ref, commit],
        ok_codes=(0, 1, 128),
    )
    if moved.returncode != 0:
        why = moved.stderr.decode("utf-8", "replace").strip()
        return Uncommitted(False, f"commit {short} stays: {ref} could not be moved back ({why})")
    lines = [f"0 {_NO_SHA}\t{p}" for p in paths]  # drop the committed entries first
    for path, entries in index_before.items():
        lines += [f"{entry}\t{path}" for entry in entries]
    stdin = "".join(line + "\0" for line in lines).encode("utf-8", "surrogateescape")
    git_out(repo_root, ["update-index", "-z", "--index-info"], stdin=stdin)
    name = ref.removeprefix("refs/heads/")
    target = parent_id[:12] if parent_id else "no commit (unborn)"
    return Uncommitted(True, f"removed commit {short}: {name} is back at {target}")
