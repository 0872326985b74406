"""Committing exactly the applied files (leaving everything else staged alone), and taking it back.

Both are planned here as a `RefMove` without touching the ref or the index; the
transaction that writes the files journals the move and makes it (see `refmove.advance`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from frogdesk.review.gitcmd import git_out
from frogdesk.review.model import SYMLINK_MODE
from frogdesk.review.refmove import (
    HistoryOutcome,
    RefMove,
    head_ref,
    index_entries,
    ref_value,
    tree_entries,
)
from frogdesk.review.target import FileState
from frogdesk.scratch import scratch_folder

_NO_SHA = "0" * 40


def plan_commit(repo_root: Path, writes: Mapping[str, FileState | None], message: str) -> RefMove:
    """The commit of HEAD plus `writes` (None: deleted), made as an object but not yet on HEAD.

    The tree is built in a temporary index from HEAD's, so the user's other staged
    changes stay staged and uncommitted; the contents are the apply's own (filtered as
    `git add` would), so the commit is known before any file is written.
    """
    ref = head_ref(repo_root)
    head = ref_value(repo_root, "HEAD")
    with scratch_folder("frogdesk-commit-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        if head:
            git_out(repo_root, ["read-tree", head], env=env)
        lines = [f"0 {_NO_SHA}\t{p}" for p in writes]  # removals first: a file may become a folder
        for path, state in writes.items():
            if state is not None:
                lines.append(f"{state.mode} {_hash_blob(repo_root, path, state)}\t{path}")
        stdin = "".join(line + "\0" for line in lines).encode("utf-8", "surrogateescape")
        git_out(repo_root, ["update-index", "-z", "--index-info"], stdin=stdin, env=env)
        tree = git_out(repo_root, ["write-tree"], env=env).decode().strip()
    parents = ["-p", head] if head else []
    commit = git_out(repo_root, ["commit-tree", tree, *parents, "-m", message]).decode().strip()
    paths = list(writes)
    return RefMove(
        "commit",
        ref,
        head,
        commit,
        index_old=index_entries(repo_root, paths),
        index_new=tree_entries(repo_root, commit, paths),
    )


def _hash_blob(repo_root: Path, path: str, state: FileState) -> str:
    """Store one content as a blob, through the clean filters and line endings `path` has."""
    how = ["--no-filters"] if state.mode == SYMLINK_MODE else [f"--path={path}"]
    # neutral=False: the user's own settings (autocrlf) decide what lands in their history.
    out = git_out(
        repo_root, ["hash-object", "-w", "--stdin", *how], stdin=state.content, neutral=False
    )
    return out.decode().strip()


def plan_uncommit(
    repo_root: Path, commit: str, index_before: Mapping[str, list[str]]
) -> RefMove | HistoryOutcome:
    """The move of HEAD (and its branch) from `commit` back to its parent, restoring the
    index entries the committed paths had; or why it must not happen.

    It may only when HEAD still is `commit` and the paths' index entries still are what the
    commit left: a commit built on, or a file the user staged or unstaged since, stays.
    """
    short = commit[:12]
    now = ref_value(repo_root, "HEAD")
    if now != commit:
        return HistoryOutcome(
            False, f"commit {short} stays: HEAD moved on to {now[:12] or 'nothing'} since the apply"
        )
    paths = list(index_before)
    committed = tree_entries(repo_root, commit, paths)
    if index_entries(repo_root, paths) != committed:
        return HistoryOutcome(
            False, f"commit {short} stays: the index of its files changed since the apply"
        )
    parent = ref_value(repo_root, f"{commit}^")
    return RefMove("uncommit", head_ref(repo_root), commit, parent, committed, dict(index_before))
