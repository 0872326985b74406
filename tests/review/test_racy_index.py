"""A same-size edit made in the second the index was written still shows up in the diff; the
review never reads a worktree's index, and its own blob cache never hides an edit."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import subprocess
import time
from pathlib import Path

from frogdesk.review.diff import compute_diff
from frogdesk.review.snapshot import CACHE_FOLDER, snapshot_tree
from frogdesk.review.snapshot_cache import CACHE_NAME, SETTLE_NS
from frogdesk.worktree.checkout import (
    Worktree,
    create_worktree,
    session_private_dir,
    snapshot_commit,
)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def start_of_next_second() -> None:
    time.sleep(1 - time.time() % 1 + 0.01)


def make_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "calc.py").write_text("x = a - b\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    return repo


def test_review_diff_sees_racy_same_size_edit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    base = git(repo, "rev-parse", "HEAD").strip()
    worktree = tmp_path / "wt"
    start_of_next_second()
    git(repo, "worktree", "add", "-q", "--detach", str(worktree), base)  # writes its index now
    (worktree / "calc.py").write_text("x = a + b\n")  # same size, same second
    start_of_next_second()
    diff = compute_diff(worktree, base)
    assert [f.path for f in diff.files] == ["calc.py"]


def test_snapshot_sees_racy_same_size_edit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    start_of_next_second()
    git(repo, "update-index", "--really-refresh")
    git(repo, "read-tree", "HEAD")  # rewrites the user's index now
    (repo / "calc.py").write_text("x = a + b\n")
    start_of_next_second()
    commit = snapshot_commit(repo)
    assert git(repo, "show", f"{commit}:calc.py") == "x = a + b\n"


def test_review_never_reads_the_worktrees_index(tmp_path: Path) -> None:
    """An index whose entries lead out of the worktree (`../secret`, an absolute name) with
    zeroed stat data: the review lists no such file and stores no blob of it."""
    repo = make_repo(tmp_path)
    base = git(repo, "rev-parse", "HEAD").strip()
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"SECRET-OUTSIDE\n")
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "--detach", str(worktree), base)
    index = Path(git(worktree, "rev-parse", "--absolute-git-dir").strip()) / "index"
    names = sorted([b"calc.py", os.path.relpath(secret, worktree).encode(), str(secret).encode()])
    index.write_bytes(crafted_index(names))
    assert os.path.relpath(secret, worktree).startswith("../")

    diff = compute_diff(worktree, base)
    assert [f.path for f in diff.files] == []
    objects = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo, capture_output=True
    ).stdout
    assert b"SECRET-OUTSIDE" not in objects
    # The control: the old snapshot (a copy of that index, then `git add -A`) stores the secret.
    copy = tmp_path / "old-index"
    shutil.copy2(index, copy)
    env = {**os.environ, "GIT_INDEX_FILE": str(copy), "GIT_DIR": str(repo / ".git")}
    env["GIT_WORK_TREE"] = str(worktree)
    subprocess.run(["git", "add", "-A", "--", "."], cwd=worktree, env=env, capture_output=True)
    objects = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo, capture_output=True
    ).stdout
    assert b"SECRET-OUTSIDE" in objects


def crafted_index(names: list[bytes]) -> bytes:
    """A version-2 git index of empty blobs with zeroed stat data, as a sandboxed process writes it."""
    body = b""
    for name in names:
        entry = struct.pack(">10I", 0, 0, 0, 0, 0, 0, 0o100644, 0, 0, 0)
        entry += hashlib.sha1(b"blob 0\0").digest() + struct.pack(">H", len(name)) + name
        body += entry + b"\0" * (8 - len(entry) % 8)
    data = b"DIRC" + struct.pack(">II", 2, len(names)) + body
    return data + hashlib.sha1(data).digest()


def _settled_worktree(tmp_path: Path, count: int) -> Worktree:
    """A FrogDesk worktree of `count` files, all older than the cache's settling time."""
    repo = tmp_path / "many"
    repo.mkdir()
    git(repo, "init", "-q")
    for i in range(count):
        (repo / f"f{i:03}.txt").write_text(f"value {i:03}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    wt = create_worktree(repo, tmp_path / "worktrees", "s1")
    time.sleep(SETTLE_NS / 1e9 + 0.2)  # every file's ctime is now settled, so it is cached
    return wt


def test_the_blob_cache_never_hides_a_same_size_edit(tmp_path: Path) -> None:
    """Hundreds of rounds: a cached file gets new bytes of the same size and its old mtime back;
    the review sees every edit (ctime, which no process can set back, is part of the key)."""
    rounds = 200
    wt = _settled_worktree(tmp_path, rounds)
    path = wt.path
    assert compute_diff(path, wt.base_commit).files == ()
    cache_file = session_private_dir(wt) / CACHE_FOLDER / CACHE_NAME
    assert len(json.loads(cache_file.read_text())["entries"]) == rounds
    for i in range(rounds):
        target = path / f"f{i:03}.txt"
        info = target.stat()
        target.write_text(f"VALUE {i:03}\n")
        os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
        assert target.stat().st_size == info.st_size
        tree = snapshot_tree(path, wt.base_commit)
        shown = git(wt.repo_root, "cat-file", "blob", f"{tree}:f{i:03}.txt")
        assert shown == f"VALUE {i:03}\n", i
    assert len(compute_diff(path, wt.base_commit).files) == rounds


def test_the_blob_cache_is_used(tmp_path: Path) -> None:
    """The control for the test above: an entry whose stat data matches is trusted (here one
    FrogDesk itself altered), so that test shows the key is sound, not that the cache is unused.
    The cache's folder is outside everything the sandbox may write."""
    from frogdesk.sandbox.policy import build_policy

    wt = _settled_worktree(tmp_path, 3)
    path = wt.path
    assert compute_diff(path, wt.base_commit).files == ()
    cache_file = session_private_dir(wt) / CACHE_FOLDER / CACHE_NAME
    data = json.loads(cache_file.read_text())
    other = data["entries"]["f001.txt"][2]
    data["entries"]["f000.txt"][2] = other
    cache_file.write_text(json.dumps(data))
    [change] = compute_diff(path, wt.base_commit).files
    assert change.path == "f000.txt" and change.new_blob == other

    policy = build_policy(wt, user_home=tmp_path / "home")
    writable = [policy.workdir_root, *policy.git_writable, policy.home, policy.tmp]
    assert not any(cache_file.is_relative_to(w) for w in writable), writable
