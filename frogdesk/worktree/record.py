"""A worktree's record beside it: paths fixed at creation, and the check that nothing was tampered with.

The sandbox can write the worktree (its `.git` file included) and the worktree's admin
folder `<common dir>/worktrees/<id>`. Nothing read from there is trusted: the record, which
lies outside everything the sandbox can write, says where the git dirs are, and the
pointer files git keeps must still say exactly what they said when FrogDesk made them.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from frogdesk.durable import atomic_write_text
from frogdesk.worktree.errors import TamperedWorktree

SIDECAR_SUFFIX = ".frogdesk.json"
WORKTREE_CONFIG = "config.worktree"


@dataclass(frozen=True)
class GitPaths:
    """A worktree's repository, as recorded when it was made: given to git, never looked up."""

    work_tree: Path
    git_dir: Path
    """The worktree's admin folder, `<common dir>/worktrees/<id>`."""
    common_dir: Path
    """The user's `.git`: objects, refs, config, hooks."""

    def env(self) -> dict[str, str]:
        """The variables that pin git to these paths (the worktree's `.git` file is never read)."""
        return {
            "GIT_DIR": str(self.git_dir),
            "GIT_COMMON_DIR": str(self.common_dir),
            "GIT_WORK_TREE": str(self.work_tree),
        }

    def pointer_files(self) -> tuple[Path, ...]:
        """The files that tell git where things are; read-only inside the sandbox where possible."""
        return (
            self.work_tree / ".git",
            self.git_dir / "gitdir",
            self.git_dir / "commondir",
            self.git_dir / WORKTREE_CONFIG,
        )


@dataclass(frozen=True)
class Worktree:
    """A session's checkout: where it is, what it started from, which repository owns it."""

    path: Path
    base_commit: str
    repo_root: Path
    name: str
    git_dir: Path
    """The admin folder `<common dir>/worktrees/<id>`, recorded at creation."""
    common_dir: Path
    """The user's git dir, recorded at creation."""
    worktree_config: str = ""
    """sha256 of the admin folder's config.worktree at creation."""

    def git_paths(self) -> GitPaths:
        """The recorded paths, in the form the git runner takes."""
        return GitPaths(work_tree=self.path, git_dir=self.git_dir, common_dir=self.common_dir)


def sidecar_of(path: Path) -> Path:
    """Where the record of the worktree at path lives: beside it, outside the sandbox's reach."""
    return path.with_name(path.name + SIDECAR_SUFFIX)


def file_digest(path: Path) -> str:
    """sha256 of a regular file's bytes; "" when it is absent."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return ""


def write_record(wt: Worktree) -> None:
    """Write the worktree's record atomically."""
    data = {
        "path": str(wt.path),
        "base_commit": wt.base_commit,
        "repo_root": str(wt.repo_root),
        "name": wt.name,
        "git_dir": str(wt.git_dir),
        "common_dir": str(wt.common_dir),
        "worktree_config": wt.worktree_config,
    }
    # ASCII JSON: a path that is not UTF-8 round-trips as an escape.
    atomic_write_text(sidecar_of(wt.path), json.dumps(data, indent=2))


def _legacy_dirs(path: Path, repo_root: Path) -> tuple[Path, Path] | None:
    """For a record written before git dirs were recorded: find them from the user's repository."""
    common = repo_root / ".git"
    if not common.is_dir():
        return None
    for admin in sorted((common / "worktrees").glob("*")):
        try:
            if (admin / "gitdir").read_text(encoding="utf-8").strip() == str(path / ".git"):
                return admin.resolve(), common.resolve()
        except OSError:
            continue
    return None


def read_record(sidecar: Path) -> Worktree | None:
    """The worktree a record describes; None when it is unreadable or incomplete."""
    try:
        data = json.loads(sidecar.read_text(encoding="utf-8"))
        path = Path(data["path"])
        repo_root = Path(data["repo_root"])
        if "git_dir" in data and "common_dir" in data:
            dirs: tuple[Path, Path] | None = (Path(data["git_dir"]), Path(data["common_dir"]))
            config = str(data.get("worktree_config", ""))
        else:
            dirs = _legacy_dirs(path, repo_root)
            config = file_digest(dirs[0] / WORKTREE_CONFIG) if dirs else ""
        if dirs is None:
            return None
        return Worktree(
            path=path,
            base_commit=str(data["base_commit"]),
            repo_root=repo_root,
            name=str(data["name"]),
            git_dir=dirs[0],
            common_dir=dirs[1],
            worktree_config=config,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _read_pointer(path: Path) -> str | None:
    """A pointer file's text, if it is a regular file (never through a link)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, 65536).decode("utf-8", "replace").strip()
    finally:
        os.close(fd)


def tampering(wt: Worktree) -> str | None:
    """What differs from the worktree's record, or None when git may safely run on it."""
    admin, common = wt.git_dir, wt.common_dir
    if admin.parent != common / "worktrees" or admin.name in ("", ".", ".."):
        return f"its admin folder {admin} is not inside {common / 'worktrees'}"
    if admin.is_symlink() or not admin.is_dir():
        return f"its admin folder {admin} is missing or a link"
    if _read_pointer(admin / "gitdir") != str(wt.path / ".git"):
        return f"{admin / 'gitdir'} no longer points at the worktree"
    commondir = _read_pointer(admin / "commondir")
    if commondir is None or (admin / commondir).resolve() != common.resolve():
        return f"{admin / 'commondir'} no longer points at {common}"
    dot_git = _read_pointer(wt.path / ".git")
    if dot_git is None or not dot_git.startswith("gitdir:"):
        return f"{wt.path / '.git'} is no longer a pointer file"
    target = Path(dot_git.removeprefix("gitdir:").strip())
    if (wt.path / target).resolve() != admin.resolve():
        return f"{wt.path / '.git'} no longer points at {admin}"
    if file_digest(admin / WORKTREE_CONFIG) != wt.worktree_config:
        return f"{admin / WORKTREE_CONFIG} was changed"
    return None


def verified(wt: Worktree) -> GitPaths:
    """The worktree's recorded git paths; TamperedWorktree when its git metadata was changed."""
    problem = tampering(wt)
    if problem is not None:
        raise TamperedWorktree(wt.path, problem)
    return wt.git_paths()


def recorded_paths(folder: Path) -> GitPaths | None:
    """The verified git paths of the FrogDesk worktree holding folder; None if it is not in one."""
    folder = Path(folder).absolute()
    for candidate in (folder, *folder.parents):
        if not candidate.name:
            continue  # the root has no record beside it
        sidecar = sidecar_of(candidate)
        if sidecar.is_file():
            wt = read_record(sidecar)
            if wt is None or wt.path != candidate:
                continue
            return verified(wt)
    return None
