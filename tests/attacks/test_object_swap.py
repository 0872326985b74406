"""A process left behind swaps private object folders for links into the user's store during a sync.

FrogDesk issue 28, item 4: in $GIT_OBJECT_DIRECTORY, fan-out folders `xx` full of empty
files named like the user's objects, next to `xx.alt -> <user .git>/objects/xx`, swapped
with renameat2(RENAME_EXCHANGE) while FrogDesk syncs; a check of the user's store and then
an unlink by path removed the user's objects through the link. The same with `pack` and
`pack.alt -> <user .git>/objects/pack`. Here a racer process (standing in for the survivor,
not sandboxed) swaps in a tight loop while the real sync runs hundreds of times; the old
check-then-unlink-by-path shape, reproduced below, is the positive control: it loses user
objects in the same number of rounds.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from frogdesk.sandbox.shells.protocol import ShellResult
from frogdesk.sandbox.synced import run_and_sync
from frogdesk.worktree.objects import (
    ObjectRoute,
    SyncReport,
    _index_pack,
    sync_objects,
)
from tests.support.gitutil import git

pytestmark = [
    pytest.mark.slow,  # hundreds of rounds against a live racer: tens of seconds on 2 cores
    pytest.mark.skipif(sys.platform != "linux", reason="renameat2 is Linux's"),
]

ROUNDS = 300
"""Syncs per scenario: enough that a fix which only narrows the window loses an object."""
PACK_ROUNDS = 200
"""Syncs per pack scenario (each real one runs git index-pack)."""

RACER = r"""
import ctypes, mmap, os, platform, signal, struct, sys

libc = ctypes.CDLL(None, use_errno=True)
RENAME_EXCHANGE = 2
pairs = [p.split("\x1f") for p in sys.argv[1:]]
dirfd = os.open(os.environ["RACER_DIR"], os.O_RDONLY | os.O_DIRECTORY)
if hasattr(libc, "renameat2"):
    def exchange(a, b):
        return libc.renameat2(dirfd, a, dirfd, b, RENAME_EXCHANGE)
else:
    number = {"x86_64": 316, "aarch64": 276}[platform.machine()]
    def exchange(a, b):
        return libc.syscall(number, dirfd, a, dirfd, b, RENAME_EXCHANGE)
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
names = [(a.encode(), b.encode()) for a, b in pairs]
counter = mmap.mmap(sys.stdin.fileno(), 8)  # the test reads how far the racer has come
# RACER_REFILL: put back, through descriptors of the real folders held from the start, the
# files a sync removed (the survivor's part when the test cannot refill between syncs).
bait = []
if os.environ.get("RACER_REFILL"):
    for a, b in names:  # b is still the link: the names are those of the user's files
        fd = os.open(a, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dirfd)
        bait.append((fd, os.listdir(os.path.join(os.environ["RACER_DIR"], b.decode()))))
refills = passes = swaps = 0
for a, b in names:
    if exchange(a, b) != 0:
        sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
    swaps += 1
print("ready", flush=True)
while not stop:
    for a, b in names:
        if exchange(a, b) == 0:
            swaps += 1
    struct.pack_into("Q", counter, 0, swaps)
    passes += 1
    if bait and passes % 64 == 0:
        for fd, files in bait:
            for name in files:
                try:
                    os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444, dir_fd=fd))
                    refills += 1
                except FileExistsError:
                    pass
print(swaps, refills, flush=True)
"""


@dataclass
class Racer:
    """The racer process, its progress counter, and how many exchanges it made once stopped."""

    process: subprocess.Popen[str]
    counter: mmap.mmap
    swaps: int = 0
    refills: int = 0
    """Bait files the racer put back (RACER_REFILL only): each one a sync had removed."""

    def progress(self) -> int:
        """Exchanges made so far."""
        return int(struct.unpack_from("Q", self.counter, 0)[0])

    def wait_for_more(self) -> None:
        """Return once the racer has made another full pass, so every round races a live racer
        (on a loaded machine it can be off the CPU for many quick rounds, all in one state)."""
        start = self.progress()
        while self.progress() == start:
            assert self.process.poll() is None, "the racer died"
            time.sleep(0.0002)


@contextlib.contextmanager
def racing(folder: Path, pairs: list[tuple[str, str]], *, refill: bool = False) -> Iterator[Racer]:
    """Exchange each pair of names in folder with renameat2(RENAME_EXCHANGE) until the block ends.

    With refill, the racer also keeps the first folder of each pair holding (empty) files named
    like those in the second, a link when the racer starts.
    """
    with tempfile.TemporaryFile() as shared:
        shared.write(bytes(8))
        shared.flush()
        process = subprocess.Popen(
            [sys.executable, "-c", RACER, *(f"{a}\x1f{b}" for a, b in pairs)],
            env={**os.environ, "RACER_DIR": str(folder), "RACER_REFILL": "1" if refill else ""},
            stdin=shared,
            stdout=subprocess.PIPE,
            text=True,
        )
        racer = Racer(process, mmap.mmap(shared.fileno(), 8))
        try:
            assert process.stdout is not None
            assert process.stdout.readline() == "ready\n", "the racer could not swap"
            yield racer
        finally:
            process.terminate()
            out, _ = process.communicate(timeout=60)
            swaps, _, refills = out.strip().partition(" ")
            racer.swaps, racer.refills = int(swaps or 0), int(refills or 0)
            racer.counter.close()


def _snapshot(store: Path) -> dict[str, bytes]:
    """Every file of the user's object store and its bytes (links would show as errors)."""
    files: dict[str, bytes] = {}
    for top, dirs, names in os.walk(store):
        assert not [d for d in dirs if Path(top, d).is_symlink()]
        for name in names:
            path = Path(top, name)
            files[path.relative_to(store).as_posix()] = path.read_bytes()
    return files


def _user_repo(tmp_path: Path, packed: bool) -> Path:
    """A repository with a few dozen loose objects (or all of them in one pack)."""
    repo = tmp_path / "user repo"
    (repo / "src").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    for i in range(40):
        (repo / "src" / f"file{i}.txt").write_text(f"content {i}\n" * (i + 1))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    (repo / "src" / "file0.txt").write_text("changed\n")
    git(repo, "commit", "-qam", "second")
    if packed:
        git(repo, "repack", "-a", "-d", "-q")
    return repo


def _check_repo(repo: Path) -> None:
    git(repo, "fsck", "--strict", "--no-dangling")
    assert git(repo, "log", "--format=%s") == "second\nfirst\n"


class Bait:
    """Files in private folders, named like the user's, refilled through descriptors held open.

    The descriptors were opened before the racer started, so a refill lands in the private
    folder whatever name it has at that instant, never in the user's store.
    """

    def __init__(self, private: Path, store: Path, folders: dict[str, dict[str, bytes]]) -> None:
        self.files = folders
        self.fds: dict[str, int] = {}
        for name in folders:
            (private / name).mkdir()
            (private / name / "tmp_keep").write_bytes(b"")  # the sync removes only empty folders
            os.symlink(store / name, private / f"{name}.alt")
            self.fds[name] = os.open(private / name, os.O_RDONLY | os.O_DIRECTORY)
        self.refill()

    def pairs(self) -> list[tuple[str, str]]:
        """The names the racer exchanges."""
        return [(name, f"{name}.alt") for name in self.files]

    def refill(self) -> None:
        """Put back every bait file the last round removed."""
        for folder, files in self.files.items():
            for name, data in files.items():
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                try:
                    fd = os.open(name, flags, 0o444, dir_fd=self.fds[folder])
                except FileExistsError:
                    continue
                with os.fdopen(fd, "wb") as out:
                    out.write(data)

    def close(self) -> None:
        """Close the held descriptors."""
        for fd in self.fds.values():
            os.close(fd)


def _loose_bait(private: Path, store: Path) -> Bait:
    """Each of the user's fan-out folders, as empty files with the same names."""
    folders = {
        d.name: {f.name: b"" for f in d.iterdir()}
        for d in sorted(store.iterdir())
        if re.fullmatch(r"[0-9a-f]{2}", d.name)
    }
    assert sum(len(f) for f in folders.values()) >= 40
    return Bait(private, store, folders)


def _pack_bait(private: Path, store: Path) -> Bait:
    """The user's pack folder, copied (a real pack, so indexing it succeeds)."""
    (private / "pack").rmdir()
    files = {f.name: f.read_bytes() for f in (store / "pack").iterdir()}
    assert any(name.endswith(".pack") for name in files)
    return Bait(private, store, {"pack": files})


def _old_sync_loose(route: ObjectRoute) -> SyncReport:
    """The shape before the fix: check the folder by name, then unlink by path."""
    present = 0
    for folder in sorted(route.private.iterdir()):
        if not re.fullmatch(r"[0-9a-f]{2}", folder.name) or folder.is_symlink():
            continue
        with contextlib.suppress(OSError):
            if not folder.is_dir():
                continue
            for entry in sorted(folder.iterdir()):
                if os.path.lexists(route.store / folder.name / entry.name):
                    present += 1
                    with contextlib.suppress(FileNotFoundError):
                        entry.unlink()
    return SyncReport(present=present)


def _old_sync_packs(route: ObjectRoute) -> SyncReport:
    """The old pack shape: the folder checked by name, the pack opened and indexed by path (the
    real git index-pack step), then its files removed by path."""
    packs = 0
    pack_dir = route.private / "pack"
    if pack_dir.is_dir() and not pack_dir.is_symlink():
        for pack in sorted(pack_dir.glob("pack-*.pack")):
            try:
                fd = os.open(pack, os.O_RDONLY | os.O_NOFOLLOW)
            except OSError:
                continue
            try:
                if _index_pack(fd, route.git_dir) is not None:
                    continue
            finally:
                os.close(fd)
            packs += 1
            for suffix in (".idx", ".rev", ".bitmap", ".keep", ".promisor", ".mtimes", ".pack"):
                with contextlib.suppress(FileNotFoundError):
                    pack.with_suffix(suffix).unlink()
    return SyncReport(packs=packs)


def _real_sync(route: ObjectRoute, round_: int) -> SyncReport:
    """The real sync: sync_objects, every other round through run_and_sync (two syncs)."""
    if round_ % 2:
        return sync_objects(route)
    reports: list[SyncReport] = []

    def command() -> ShellResult:
        reports.append(sync_objects(route))  # stands for the command's own run
        return ShellResult(exit_code=0, stdout="", stderr="")

    result = run_and_sync(route, command)
    # The notice of the sync after the command (refused or failed files) counts as an error.
    return replace(reports[0], errors=(result.stderr,) if result.stderr else ())


@dataclass
class Outcome:
    """What the rounds did to the user's store and what the syncs said."""

    before: dict[str, bytes]
    after: dict[str, bytes]
    damaged_rounds: int
    """Rounds after which a file of the user's store was missing (a later index can heal a pack)."""
    reports: list[SyncReport]
    swaps: int
    repo: Path


def _names(store: Path) -> set[str]:
    return {os.path.join(top, n) for top, _, names in os.walk(store) for n in names}


def _attack(
    tmp_path: Path,
    packed: bool,
    sync: Callable[[ObjectRoute, int], SyncReport],
    rounds: int,
) -> Outcome:
    """Run `rounds` syncs under the racer; the user's store is looked at after each one."""
    repo = _user_repo(tmp_path, packed)
    route = ObjectRoute(private=tmp_path / "session" / "objects", git_dir=repo / ".git")
    route.prepare()
    before = _snapshot(route.store)
    names = _names(route.store)
    bait = (_pack_bait if packed else _loose_bait)(route.private, route.store)
    reports: list[SyncReport] = []
    damaged = 0
    try:
        with racing(route.private, bait.pairs()) as racer:
            for round_ in range(rounds):
                racer.wait_for_more()
                reports.append(sync(route, round_))
                damaged += not names <= _names(route.store)
                bait.refill()
    finally:
        bait.close()
    return Outcome(before, _snapshot(route.store), damaged, reports, racer.swaps, repo)


def test_the_old_shape_loses_user_objects_under_the_swap(tmp_path: Path) -> None:
    """Positive control: the racer works, and checking by name then unlinking by path loses."""
    seen = _attack(tmp_path, False, lambda route, _: _old_sync_loose(route), ROUNDS)
    assert seen.swaps > ROUNDS
    assert seen.damaged_rounds > 0, "the old shape lost nothing: the racer is not racing"
    assert set(seen.before) - set(seen.after)


@pytest.fixture(params=["openat2", "walk"])
def resolver(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """openat2 where the kernel has it, and the O_NOFOLLOW walk that older kernels get."""
    from frogdesk import beneath

    if request.param == "openat2" and not beneath.has_openat2():
        pytest.skip("this kernel has no openat2")
    monkeypatch.setitem(beneath._state, "openat2", request.param == "openat2")
    return str(request.param)


def test_loose_sync_keeps_the_users_objects_under_the_swap(tmp_path: Path, resolver: str) -> None:
    seen = _attack(tmp_path, False, _real_sync, ROUNDS)
    assert seen.swaps > ROUNDS
    assert seen.damaged_rounds == 0
    assert seen.after == seen.before
    _check_repo(seen.repo)
    # The sync did reach the bait in the real private folders, round after round.
    assert sum(r.present for r in seen.reports) > ROUNDS
    assert not [r for r in seen.reports if r.loose or r.rejected or r.errors][:1]


def test_the_old_pack_shape_loses_user_packs_under_the_swap(tmp_path: Path) -> None:
    """Positive control for packs: the racer works, and removing by path loses the user's pack."""
    seen = _attack(tmp_path, True, lambda route, _: _old_sync_packs(route), PACK_ROUNDS)
    assert seen.swaps > PACK_ROUNDS
    assert seen.damaged_rounds > 0, "the old shape lost nothing: the racer is not racing"


def test_pack_sync_keeps_the_users_packs_under_the_swap(tmp_path: Path, resolver: str) -> None:
    seen = _attack(tmp_path, True, _real_sync, PACK_ROUNDS)
    assert seen.swaps > PACK_ROUNDS
    assert seen.damaged_rounds == 0
    assert seen.after == seen.before
    _check_repo(seen.repo)
    assert sum(r.packs for r in seen.reports) > 0
    assert not [r for r in seen.reports if r.rejected or r.errors][:1]


CLI_COMMANDS = 8
"""`true` commands after the bait (the issue used six)."""
BAIT_COMMAND = r"""
set -e
store="$GIT_ALTERNATE_OBJECT_DIRECTORIES"
cd "$GIT_OBJECT_DIRECTORY"
for d in "$store"/??; do
  n="${d##*/}"
  mkdir -p "$n"
  : > "$n/tmp_keep"
  for f in "$d"/*; do : > "$n/${f##*/}"; done
  ln -s "$d" "$n.alt"
done
ls -d ?? | wc -l > READY
"""
"""The survivor's set-up, run as the model's first Bash command: bait beside links into the store."""


def _start_racer_when_ready(stop: threading.Event, racers: list[Racer]) -> None:
    """Wait for the bait of the session's first command, then race its folders until stop."""
    from frogdesk.paths import AppPaths

    while not stop.is_set():
        ready = list(AppPaths.default().worktrees_dir.glob("*.sandbox/objects/READY"))
        if ready:
            break
        time.sleep(0.01)
    else:
        return
    private = ready[0].parent
    pairs = [(link.name[:-4], link.name) for link in sorted(private.glob("??.alt"))]
    with racing(private, pairs, refill=True) as racer:
        racers.append(racer)
        stop.wait()


def test_the_swap_through_the_cli_at_landlock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's replay: bait from a Bash command, then `true` commands, a survivor racing them
    (emulated by the test, outside the sandbox); the user's objects stay and `git log` works.

    The positive controls are the tests above (this one needs the old sync in the CLI's own
    process); run by hand against the old sync, this replay lost user objects in each of four
    runs."""
    from tests.attacks.conftest import _available
    from tests.attacks.harness import bash, run_attack
    from tests.support.e2e import make_user_repo

    why = _available("landlock")
    if why is not None:
        pytest.skip(why)
    # the replay's `true` commands are alike on purpose: every one of them runs, and the run
    # ends on the script's own end, not as `stuck`
    monkeypatch.setenv("FROGDESK_STOP_AFTER_REPEATS", "0")
    repo = make_user_repo(tmp_path)
    extra = [str(tmp_path / f"extra{i}") for i in range(30)]
    for i, name in enumerate(extra):  # more of the user's loose objects: more to lose
        Path(name).write_text(f"user object {i}\n")
    git(repo, "hash-object", "-w", *extra)
    store = repo / ".git" / "objects"
    before = _snapshot(store)
    stop = threading.Event()
    racers: list[Racer] = []
    watcher = threading.Thread(target=_start_racer_when_ready, args=(stop, racers))
    watcher.start()
    try:
        replies = [bash(BAIT_COMMAND)]
        replies += [bash("sleep 0.2; true") for _ in range(CLI_COMMANDS)]
        run = run_attack(repo, replies, tmp_path, "landlock")
    finally:
        stop.set()
        watcher.join()
    assert run.done.returncode == 0, run.done.stderr
    assert racers and racers[0].swaps > 0, "the racer never started"
    assert racers[0].refills > 0, "no sync removed bait while the racer ran"
    after = _snapshot(store)
    assert {name: after.get(name) for name in before} == before
    git(repo, "fsck", "--no-dangling")
    assert git(repo, "log", "--format=%s", "main")
