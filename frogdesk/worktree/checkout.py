"""Session worktrees: snapshot what the user sees, check it out elsewhere, remove it later.

A session works in a detached git worktree outside the user's repository, checked out from
a snapshot commit of the user's working tree (HEAD plus staged, unstaged and untracked
non-ignored files). The snapshot is built with a temporary index file, so the user's
index, stash, HEAD and branches are never touched; only new objects and the worktree's
registration under `.git/worktrees/` are added to their repository.

Submodules are skipped: their gitlink entries are kept (so a review sees no change) but
their directories stay empty in the worktree. Git LFS files stay pointer files: no smudge
filter runs on checkout (the pointer is what the repository holds, and fetching content
would need the network). Checkout hooks of the user's repository do not run.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from frogdesk.scratch import scratch_folder
from frogdesk.worktree.errors import BareRepository, NotAGitRepository, WorktreeError
from frogdesk.worktree.git import GitError, git_out
from frogdesk.worktree.record import (
    SIDECAR_SUFFIX,
    WORKTREE_CONFIG,
    Worktree,
    file_digest,
    read_record,
    sidecar_of,
    tampering,
    verified,
    write_record,
)

# The record's names stay importable from here, where worktrees are made and removed.
__all__ = [
    "SIDECAR_SUFFIX",
    "Worktree",
    "create_worktree",
    "discard_worktree",
    "find_repo_root",
    "list_worktrees",
    "load_worktree",
    "prune_stale",
    "remove_named",
    "session_private_dir",
    "snapshot_commit",
]

PRIVATE_SUFFIX = ".sandbox"
SNAPSHOT_MESSAGE = "FrogDesk snapshot of the working tree"
_IDENTITY = {
    "GIT_AUTHOR_NAME": "FrogDesk",
    "GIT_AUTHOR_EMAIL": "frogdesk@localhost",
    "GIT_COMMITTER_NAME": "FrogDesk",
    "GIT_COMMITTER_EMAIL": "frogdesk@localhost",
}
# Checkout keeps LFS pointer files as they are, whether or not git-lfs is installed.
_CHECKOUT_CONFIG = ("filter.lfs.process=", "filter.lfs.smudge=cat", "filter.lfs.required=false")


def _run_git(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    """Run hardened git in cwd; raise WorktreeError with git's message."""
    try:
        out = git_out(cwd, args, env={**_IDENTITY, **(env or {})}, config=_CHECKOUT_CONFIG)
    except GitError as exc:
        raise WorktreeError(f"{exc} (in {cwd})") from None
    return out.decode("utf-8", "surrogateescape")


def find_repo_root(path: Path) -> Path:
    """The top of the working tree containing path; NotAGitRepository or BareRepository otherwise."""
    path = Path(path).resolve()
    if not path.exists():
        raise WorktreeError(f"{path} does not exist")
    folder = path if path.is_dir() else path.parent
    try:
        bare, inside = git_out(
            folder, ["rev-parse", "--is-bare-repository", "--is-inside-work-tree"]
        ).split()
    except (GitError, ValueError):
        raise NotAGitRepository(path) from None
    if bare == b"true":
        raise BareRepository(path)
    if inside != b"true":
        # Inside a `.git` folder: its working tree is the folder that holds it.
        common = git_out(folder, ["rev-parse", "--path-format=absolute", "--git-common-dir"])
        return Path(common.decode("utf-8", "surrogateescape").strip()).parent.resolve()
    top = git_out(folder, ["rev-parse", "--show-toplevel"]).decode("utf-8", "surrogateescape")
    return Path(top.strip()).resolve()


def _head_commit(repo_root: Path) -> str | None:
    try:
        return _run_git(repo_root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").strip()
    except WorktreeError:
        return None  # a repository with no commits yet


def snapshot_commit(repo_root: Path) -> str:
    """A commit object of the working tree as the user sees it, made without touching their state.

    The tree holds HEAD plus every staged, unstaged and untracked non-ignored file; its parent
    is HEAD (none in a repository without commits). No ref points at it.
    """
    repo_root = find_repo_root(repo_root)
    head = _head_commit(repo_root)
    user_index = Path(
        _run_git(repo_root, "rev-parse", "--path-format=absolute", "--git-path", "index").strip()
    )
    with scratch_folder("frogdesk-index-") as tmp:
        index = Path(tmp) / "index"
        env = {"GIT_INDEX_FILE": str(index)}
        if user_index.is_file():
            # Starting from a copy of the user's index reuses its stat cache: large trees are not rehashed.
            shutil.copy2(
                user_index, index
            )  # keep its mtime: git uses it to spot racily clean entries
        elif head is not None:
            _run_git(repo_root, "read-tree", head, env=env)
        _run_git(repo_root, "add", "--all", "--", ".", env=env)
        tree = _run_git(repo_root, "write-tree", env=env).strip()
    parents = ["-p", head] if head is not None else []
    return _run_git(repo_root, "commit-tree", tree, *parents, "-m", SNAPSHOT_MESSAGE).strip()


def _check_name(name: str) -> None:
    if (
        not name
        or name in {".", ".."}
        or name.startswith(".")
        or "/" in name
        or "\0" in name
        or name.endswith((SIDECAR_SUFFIX, PRIVATE_SUFFIX))
    ):
        raise WorktreeError(f"invalid worktree name {name!r}: use a plain file name")


def session_private_dir(wt: Worktree) -> Path:
    """Where a session's sandbox keeps its private HOME and tmp: beside the worktree."""
    return wt.path.with_name(wt.path.name + PRIVATE_SUFFIX)


def _sidecar(path: Path) -> Path:
    return sidecar_of(path)


def _read_sidecar(sidecar: Path) -> Worktree | None:
    return read_record(sidecar)


def _record_git_dirs(repo_root: Path, path: Path) -> tuple[Path, Path, str]:
    """The admin and common dirs of a worktree git has just made (nothing sandboxed ran there yet)."""
    common = Path(
        _run_git(repo_root, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
    ).resolve()
    text = (path / ".git").read_text(encoding="utf-8").strip()
    if not text.startswith("gitdir:"):
        raise WorktreeError(f"git made {path / '.git'} without a gitdir line")
    admin = (path / text.removeprefix("gitdir:").strip()).resolve()
    if admin.parent != common / "worktrees":
        raise WorktreeError(f"git put the worktree's admin folder at {admin}, not in {common}")
    config = admin / WORKTREE_CONFIG
    if not config.exists():
        # An empty one changes nothing for git, and can then be mounted read-only.
        config.touch()
    return admin, common, file_digest(config)


def create_worktree(repo: Path, worktrees_dir: Path, name: str) -> Worktree:
    """Snapshot the repository containing `repo` and check the snapshot out at worktrees_dir/name."""
    _check_name(name)
    repo_root = find_repo_root(repo)
    worktrees_dir = Path(worktrees_dir).resolve()
    if worktrees_dir == repo_root or worktrees_dir.is_relative_to(repo_root):
        raise WorktreeError(
            f"the worktrees folder {worktrees_dir} must be outside the repository {repo_root}"
        )
    path = worktrees_dir / name
    if path.exists() or _sidecar(path).exists():
        raise WorktreeError(f"a worktree named {name!r} already exists in {worktrees_dir}")
    base = snapshot_commit(repo_root)
    worktrees_dir.mkdir(parents=True, exist_ok=True)
    common = repo_root / ".git"  # replaced by what git reports once the worktree exists
    wt = Worktree(
        path=path,
        base_commit=base,
        repo_root=repo_root,
        name=name,
        git_dir=common,
        common_dir=common,
    )
    write_record(wt)  # first, so that a crash below leaves something prune_stale can find
    try:
        _run_git(repo_root, "worktree", "add", "--detach", str(path), base)
        admin, common, config = _record_git_dirs(repo_root, path)
        wt = replace(wt, git_dir=admin, common_dir=common, worktree_config=config)
        write_record(wt)
    except BaseException:
        _sidecar(path).unlink(missing_ok=True)
        shutil.rmtree(path, ignore_errors=True)
        _prune_registrations(repo_root)
        raise
    return wt


def load_worktree(worktrees_dir: Path, name: str, *, check: bool = True) -> Worktree:
    """The worktree recorded as worktrees_dir/name (to resume a session).

    WorktreeError if it is gone; TamperedWorktree if its git metadata no longer matches
    the record (the sandbox wrote it), unless check=False (to discard it).
    """
    _check_name(name)
    path = Path(worktrees_dir).resolve() / name
    wt = _read_sidecar(_sidecar(path))
    if wt is None or not path.is_dir():
        raise WorktreeError(f"no worktree named {name!r} in {worktrees_dir}")
    if check:
        verified(wt)
    return wt


def _prune_registrations(repo_root: Path) -> None:
    # The repository itself may be gone or broken; then nothing of ours is left to prune.
    with contextlib.suppress(WorktreeError):
        _run_git(repo_root, "worktree", "prune")


def discard_worktree(wt: Worktree) -> None:
    """Remove the worktree's files, its `git worktree` registration and its record.

    A tampered worktree is removed by hand (its files, then its recorded admin folder):
    git would follow the pointers the sandbox wrote.
    """
    registered = wt.repo_root.is_dir() and tampering(wt) is None
    if registered and wt.path.exists():
        try:
            _run_git(wt.repo_root, "worktree", "remove", "--force", "--force", str(wt.path))
        except WorktreeError:
            registered = False  # fall back to deleting by hand, then prune
    if wt.path.exists():
        shutil.rmtree(wt.path, ignore_errors=True)
    if wt.path.exists():
        raise WorktreeError(f"could not remove the worktree folder {wt.path}")
    if wt.git_dir.parent == wt.common_dir / "worktrees" and not wt.git_dir.is_symlink():
        shutil.rmtree(wt.git_dir, ignore_errors=True)
    shutil.rmtree(session_private_dir(wt), ignore_errors=True)
    if wt.repo_root.is_dir():
        _prune_registrations(wt.repo_root)
    _sidecar(wt.path).unlink(missing_ok=True)


def _registered_paths(repo_root: Path) -> set[Path]:
    out = _run_git(repo_root, "worktree", "list", "--porcelain", "-z")
    paths: set[Path] = set()
    for field in out.split("\0"):
        if field.startswith("worktree "):
            paths.add(Path(field.removeprefix("worktree ")).resolve())
    return paths


def list_worktrees(repo_root: Path) -> list[Worktree]:
    """FrogDesk's worktrees registered in this repository, by name."""
    repo_root = find_repo_root(repo_root)
    found: list[Worktree] = []
    for path in _registered_paths(repo_root):
        if path == repo_root:
            continue
        wt = _read_sidecar(_sidecar(path))
        if wt is not None and wt.repo_root == repo_root:
            found.append(wt)
    return sorted(found, key=lambda w: w.name)


def _is_stale(wt: Worktree) -> bool:
    if not wt.path.is_dir() or not (wt.path / ".git").exists():
        return True
    try:
        return wt.path.resolve() not in _registered_paths(wt.repo_root)
    except WorktreeError:
        return True  # the repository is gone or no longer a repository


def prune_stale(
    worktrees_dir: Path,
    min_age: float = 0.0,
    orphaned: Callable[[Worktree], bool] | None = None,
) -> list[str]:
    """Remove records whose worktree or repository is gone (a crash, a deleted clone).

    Live worktrees are kept, whatever their age: they hold a session's unreviewed work,
    unless `orphaned` says no session owns one (a crash while a session was being made).
    Records younger than `min_age` seconds are left alone: another process may be
    creating that worktree right now. Returns the names removed.
    """
    worktrees_dir = Path(worktrees_dir)
    if not worktrees_dir.is_dir():
        return []
    removed: list[str] = []
    now = time.time()
    for sidecar in sorted(worktrees_dir.glob("*" + SIDECAR_SUFFIX)):
        try:
            if min_age > 0 and now - sidecar.stat().st_mtime < min_age:
                continue
        except FileNotFoundError:
            continue  # removed meanwhile
        wt = _read_sidecar(sidecar)
        if wt is None:
            sidecar.unlink(missing_ok=True)
            removed.append(sidecar.name.removesuffix(SIDECAR_SUFFIX))
            continue
        if _is_stale(wt):
            shutil.rmtree(wt.path, ignore_errors=True)
            shutil.rmtree(session_private_dir(wt), ignore_errors=True)
            if wt.repo_root.is_dir():
                _prune_registrations(wt.repo_root)
            sidecar.unlink(missing_ok=True)
            removed.append(wt.name)
        elif orphaned is not None and orphaned(wt):
            with contextlib.suppress(WorktreeError):
                discard_worktree(wt)
                removed.append(wt.name)
    return removed


def remove_named(worktrees_dir: Path, name: str) -> bool:
    """Remove whatever exists of the worktree `name`, made or half-made: its files, its
    registration in the user's repository, its private folder and its record.

    For a creation that was killed: the record is written before `git worktree add`, so a
    registration never exists without it. True when something was there.
    """
    _check_name(name)
    path = Path(worktrees_dir).resolve() / name
    sidecar = _sidecar(path)
    wt = _read_sidecar(sidecar)
    if wt is not None:
        discard_worktree(wt)  # a killed creation's record may hold placeholder git dirs: safe
        return True
    private = path.with_name(path.name + PRIVATE_SUFFIX)
    found = any(p.exists() or p.is_symlink() for p in (path, private, sidecar))
    shutil.rmtree(path, ignore_errors=True)
    shutil.rmtree(private, ignore_errors=True)
    sidecar.unlink(missing_ok=True)
    return found
