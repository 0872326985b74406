"""Session worktrees on real repositories: snapshot contents, edge cases, lifecycle, user state untouched."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from frogdesk.worktree.checkout import (
    create_worktree,
    discard_worktree,
    find_repo_root,
    list_worktrees,
    load_worktree,
    prune_stale,
    snapshot_commit,
)
from frogdesk.worktree.errors import BareRepository, NotAGitRepository, WorktreeError
from tests.support.gitutil import git


def tree_files(commit: str, repo: Path) -> dict[str, str]:
    """path -> blob content of every file in a commit."""
    names = git(repo, "ls-tree", "-r", "-z", "--name-only", commit).split("\0")
    return {n: git(repo, "show", f"{commit}:{n}") for n in names if n}


def test_snapshot_holds_head_dirty_and_untracked_but_not_ignored(repo: Path) -> None:
    commit = snapshot_commit(repo)
    files = tree_files(commit, repo)
    assert files["src/app.py"] == "print('v2, unstaged')\n"
    assert files["notes.txt"] == "untracked\n"
    assert "debug.log" not in files
    assert not any(name.startswith(".venv") for name in files)
    assert git(repo, "rev-parse", f"{commit}^").strip() == git(repo, "rev-parse", "HEAD").strip()


def test_snapshot_includes_staged_changes_and_deletions(repo: Path) -> None:
    (repo / "staged.txt").write_text("staged\n")
    git(repo, "add", "staged.txt")
    (repo / "README.md").unlink()
    files = tree_files(snapshot_commit(repo), repo)
    assert files["staged.txt"] == "staged\n"
    assert "README.md" not in files


def test_worktree_is_detached_checkout_of_the_snapshot(repo: Path, worktrees_dir: Path) -> None:
    wt = create_worktree(repo, worktrees_dir, "s1")
    assert wt.path == worktrees_dir.resolve() / "s1"
    assert (wt.path / "src" / "app.py").read_text() == "print('v2, unstaged')\n"
    assert (wt.path / "notes.txt").read_text() == "untracked\n"
    assert not (wt.path / "debug.log").exists()
    assert git(wt.path, "rev-parse", "HEAD").strip() == wt.base_commit
    assert git(wt.path, "status", "--porcelain") == ""
    assert "Not currently on any branch" in git(wt.path, "status")
    assert wt.common_dir == (repo / ".git").resolve()
    assert wt.git_dir.parent == wt.common_dir / "worktrees"
    assert (wt.path / ".git").read_text().strip() == f"gitdir: {wt.git_dir}"
    discard_worktree(wt)


def test_repo_without_commits(tmp_path: Path, worktrees_dir: Path) -> None:
    repo = tmp_path / "fresh"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "first.txt").write_text("new\n")
    wt = create_worktree(repo, worktrees_dir, "s1")
    assert (wt.path / "first.txt").read_text() == "new\n"
    assert git(repo, "rev-list", "--parents", "-n1", wt.base_commit).split() == [wt.base_commit]
    with pytest.raises(subprocess.CalledProcessError):
        git(repo, "rev-parse", "--verify", "HEAD")  # still no commit on the user's side
    discard_worktree(wt)


def test_empty_repo_without_files(tmp_path: Path, worktrees_dir: Path) -> None:
    repo = tmp_path / "empty"
    repo.mkdir()
    git(repo, "init", "-q")
    wt = create_worktree(repo, worktrees_dir, "s1")
    assert sorted(p.name for p in wt.path.iterdir()) == [".git"]
    discard_worktree(wt)


def test_spaces_and_unicode_names(repo: Path, worktrees_dir: Path) -> None:
    names = ["with space.txt", "ünïcødé ✓.md", "dir with space/日本語.txt", "-leading-dash"]
    for name in names:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(f"content of {name}\n")
    wt = create_worktree(repo, worktrees_dir, "name with space ✓")
    for name in names:
        assert (wt.path / name).read_text() == f"content of {name}\n"
    assert [w.name for w in list_worktrees(repo)] == ["name with space ✓"]
    discard_worktree(wt)
    assert not wt.path.exists()


def test_repo_found_from_a_subdirectory_given_relative_to_cwd(
    tmp_path: Path, worktrees_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outer = tmp_path / "projects"
    repo = outer / "client" / "app"
    (repo / "pkg" / "deep").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "pkg" / "deep" / "x.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "c")
    monkeypatch.chdir(outer)
    assert find_repo_root(Path("client/app/pkg/deep")) == repo.resolve()
    wt = create_worktree(Path("client/app/pkg/deep"), worktrees_dir, "s1")
    assert wt.repo_root == repo.resolve()
    assert (wt.path / "pkg" / "deep" / "x.py").read_text() == "x = 1\n"
    discard_worktree(wt)


def test_not_a_repository_offers_git_init(tmp_path: Path, worktrees_dir: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(NotAGitRepository) as info:
        create_worktree(plain, worktrees_dir, "s1")
    assert "git init" in str(info.value)
    assert str(plain) in str(info.value)
    assert not worktrees_dir.exists()


def test_bare_repository_is_refused(tmp_path: Path, worktrees_dir: Path) -> None:
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    with pytest.raises(BareRepository) as info:
        create_worktree(bare, worktrees_dir, "s1")
    assert "bare" in str(info.value)


def test_missing_path_and_bad_names_are_refused(
    repo: Path, worktrees_dir: Path, tmp_path: Path
) -> None:
    with pytest.raises(WorktreeError, match="does not exist"):
        find_repo_root(tmp_path / "nowhere")
    for bad in ["", "a/b", "..", ".hidden", "x.sandbox", "x.frogdesk.json"]:
        with pytest.raises(WorktreeError, match="invalid worktree name"):
            create_worktree(repo, worktrees_dir, bad)
    with pytest.raises(WorktreeError, match="outside the repository"):
        create_worktree(repo, repo / "worktrees", "s1")


def test_duplicate_name_is_refused(worktree: object, repo: Path, worktrees_dir: Path) -> None:
    with pytest.raises(WorktreeError, match="already exists"):
        create_worktree(repo, worktrees_dir, "session-1")


def test_submodules_are_skipped_but_their_gitlink_kept(tmp_path: Path, worktrees_dir: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q")
    (lib / "lib.py").write_text("LIB = 1\n")
    git(lib, "add", "-A")
    git(lib, "commit", "-qm", "lib")
    repo = tmp_path / "main"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib")
    git(repo, "commit", "-qm", "with submodule")
    wt = create_worktree(repo, worktrees_dir, "s1")
    sub = wt.path / "vendor" / "lib"
    assert sub.is_dir() and list(sub.iterdir()) == []
    assert git(wt.path, "ls-files", "-s", "vendor/lib").startswith("160000 ")
    assert git(wt.path, "status", "--porcelain") == ""
    assert (wt.path / ".gitmodules").is_file()
    discard_worktree(wt)


LFS_POINTER = (
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    "size 12345\n"
)


def test_lfs_pointers_stay_pointers_even_with_a_failing_lfs_filter(
    tmp_path: Path, worktrees_dir: Path
) -> None:
    repo = tmp_path / "lfs"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / ".gitattributes").write_text("*.bin filter=lfs diff=lfs merge=lfs -text\n")
    (repo / "model.bin").write_text(LFS_POINTER)
    git(repo, "-c", "filter.lfs.clean=cat", "add", "-A")
    git(repo, "commit", "-qm", "lfs")
    # As if git-lfs were configured but could not run (or would try to download).
    for key, value in [("process", "false"), ("smudge", "false"), ("required", "true")]:
        git(repo, "config", f"filter.lfs.{key}", value)
    wt = create_worktree(repo, worktrees_dir, "s1")
    assert (wt.path / "model.bin").read_text() == LFS_POINTER
    discard_worktree(wt)


def _state(repo: Path) -> dict[str, object]:
    """Everything of the user's that must not change, byte for byte."""
    files: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(repo):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = Path(dirpath) / name
            files[str(path.relative_to(repo))] = hashlib.sha256(path.read_bytes()).hexdigest()
    dot_git = repo / ".git"
    return {
        "files": files,
        "index": hashlib.sha256((dot_git / "index").read_bytes()).hexdigest(),
        "HEAD": (dot_git / "HEAD").read_bytes(),
        "refs": git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
        "stash": git(repo, "stash", "list"),
        "config": (dot_git / "config").read_bytes(),
        "status": git(repo, "status", "--porcelain=v2", "--branch"),
    }


def test_user_state_unchanged_after_create_use_discard(repo: Path, worktrees_dir: Path) -> None:
    (repo / "stashed.txt").write_text("s\n")
    git(repo, "add", "stashed.txt")
    git(repo, "stash", "push", "-q", "-m", "user stash")
    (repo / "staged.txt").write_text("staged\n")
    git(repo, "add", "staged.txt")
    git(repo, "branch", "feature")
    before = _state(repo)
    wt = create_worktree(repo, worktrees_dir, "s1")
    (wt.path / "src" / "app.py").write_text("print('agent')\n")
    (wt.path / "new.py").write_text("x = 1\n")
    git(wt.path, "add", "-A")
    git(wt.path, "commit", "-qm", "agent work")
    assert _state(repo) == before
    discard_worktree(wt)
    assert _state(repo) == before
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_list_load_and_discard(repo: Path, worktrees_dir: Path) -> None:
    a = create_worktree(repo, worktrees_dir, "a")
    b = create_worktree(repo, worktrees_dir, "b")
    assert list_worktrees(repo) == [a, b]
    assert load_worktree(worktrees_dir, "b") == b
    discard_worktree(a)
    assert list_worktrees(repo) == [b]
    with pytest.raises(WorktreeError, match="no worktree named"):
        load_worktree(worktrees_dir, "a")
    discard_worktree(b)
    discard_worktree(b)  # twice is harmless
    assert list(worktrees_dir.iterdir()) == []


def test_prune_stale_removes_broken_records_and_keeps_live_ones(
    repo: Path, worktrees_dir: Path, tmp_path: Path
) -> None:
    live = create_worktree(repo, worktrees_dir, "live")
    gone_dir = create_worktree(repo, worktrees_dir, "gone-dir")
    shutil.rmtree(gone_dir.path)
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    (other / "f").write_text("f\n")
    gone_repo = create_worktree(other, worktrees_dir, "gone-repo")
    shutil.rmtree(other)
    (worktrees_dir / "garbage.frogdesk.json").write_text("{not json")
    removed = prune_stale(worktrees_dir)
    assert sorted(removed) == ["garbage", "gone-dir", "gone-repo"]
    assert not gone_repo.path.exists()
    assert list_worktrees(repo) == [live]
    assert "gone-dir" not in git(repo, "worktree", "list", "--porcelain")
    assert prune_stale(worktrees_dir) == []
    assert prune_stale(tmp_path / "no such dir") == []


def test_discard_survives_a_deleted_repository(repo: Path, worktrees_dir: Path) -> None:
    wt = create_worktree(repo, worktrees_dir, "s1")
    shutil.rmtree(repo)
    discard_worktree(wt)
    assert not wt.path.exists()
    assert list(worktrees_dir.iterdir()) == []


@pytest.mark.slow
def test_large_repository(tmp_path: Path, worktrees_dir: Path) -> None:
    repo = tmp_path / "large"
    repo.mkdir()
    git(repo, "init", "-q")
    for i in range(3000):
        folder = repo / f"d{i % 50}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{i}.txt").write_text(f"{i}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "many")
    (repo / "d0" / "f0.txt").write_text("changed\n")
    wt = create_worktree(repo, worktrees_dir, "s1")
    assert (wt.path / "d0" / "f0.txt").read_text() == "changed\n"
    assert sum(1 for _ in wt.path.rglob("*.txt")) == 3000
    discard_worktree(wt)
