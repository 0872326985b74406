"""A process left running in the worktree swaps a folder and a link to ~/.ssh while the
tools work (FrogDesk issue 28, item 3): Read, Write, Edit and Glob never reach outside.

The racer is a real, unsandboxed process (it stands in for the survivor of a Bash call
at the landlock level) exchanging two names with renameat2(RENAME_EXCHANGE) in a tight
loop. The positive control runs the same racer through the old method (a realpath check,
then open() or a rename by name) until it leaks; the real tools then get at least as many
rounds (and at least 400 of each call), so the test cannot pass because the race never
happened.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from frogdesk.engine.chat import ToolCall
from frogdesk.leaf.runner import ToolRunner

ROUNDS = 400
SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- marker the-users-real-key\n"
DECOY = "marker decoy\n"
USER_KEYS = "ssh-ed25519 AAAA the-users-own-key\n"
ATTACKER_KEY = "ssh-ed25519 AAAA attacker\n"
OUTSIDE_ONLY = "known_hosts_only_outside"

RACER = r"""
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
number = {"x86_64": 316, "aarch64": 276, "riscv64": 276}[os.uname().machine]
a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
swaps = 0
def done(*_):
    print(swaps, flush=True)
    os._exit(0)
signal.signal(signal.SIGTERM, done)
print("ready", flush=True)
while True:
    if libc.syscall(number, -100, a, -100, b, 2) != 0:  # AT_FDCWD, RENAME_EXCHANGE
        print("error", ctypes.get_errno(), flush=True)
        os._exit(1)
    swaps += 1
"""


@dataclass(frozen=True)
class Arena:
    """A worktree with `d` (decoy) and `d.alt -> secret folder`, a file pair `k`/`k.alt`."""

    work: Path
    secret: Path


def make_arena(base: Path) -> Arena:
    work, secret = base / "repo", base / "dot-ssh"
    (work / "d").mkdir(parents=True)
    secret.mkdir()
    (secret / "id_ed25519").write_text(SECRET, encoding="utf-8")
    (secret / "authorized_keys").write_text(USER_KEYS, encoding="utf-8")
    (secret / OUTSIDE_ONLY).write_text("x\n", encoding="utf-8")
    (work / "d" / "id_ed25519").write_text(DECOY, encoding="utf-8")
    os.symlink(secret, work / "d.alt")
    (work / "k").write_text(DECOY, encoding="utf-8")
    os.symlink(secret / "id_ed25519", work / "k.alt")
    return Arena(work, secret)


def snapshot(folder: Path) -> dict[str, tuple[int, int, int, int, bytes]]:
    """Every entry of the folder: mode, inode, size, mtime and bytes (byte for byte)."""
    out = {}
    for entry in sorted(os.listdir(folder)):
        info = os.lstat(folder / entry)
        data = (folder / entry).read_bytes()
        out[entry] = (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns, data)
    return out


@dataclass
class Racer:
    """The racer process; `stop` returns how many exchanges it made."""

    proc: subprocess.Popen[str]

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=60)
        return int(out.split()[-1])


@pytest.fixture
def race() -> Iterator[list[Racer]]:
    """Start racers with `start(work, a, b)`; every one is stopped at the end."""
    started: list[Racer] = []
    yield started
    for racer in started:
        if racer.proc.poll() is None:
            racer.proc.kill()
            racer.proc.wait(timeout=60)


def start(racers: list[Racer], work: Path, a: str, b: str) -> Racer:
    proc = subprocess.Popen(
        [sys.executable, "-c", RACER, a, b],
        cwd=work,
        stdout=subprocess.PIPE,
        text=True,
    )
    racer = Racer(proc)
    racers.append(racer)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return racer


def observe(runner: ToolRunner, name: str, **args: str) -> tuple[str, bool]:
    outcome = runner.run(ToolCall(name, args))
    return outcome.observation, outcome.ok


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root + os.sep)


def old_read(work: Path, raw: str) -> str:
    """The old Read: the realpath check, then open() of the name (what the tools did)."""
    path = os.path.normpath(os.path.join(work, raw))
    if not _within(os.path.realpath(path), os.path.realpath(work)):
        raise PermissionError(f"{raw} leads outside the repository workdir through a symlink")
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def old_write(work: Path, raw: str, text: str) -> None:
    """The old Write: the realpath check, then a rename onto the realpath made again."""
    path = os.path.normpath(os.path.join(work, raw))
    if not _within(os.path.realpath(path), os.path.realpath(work)):
        raise PermissionError(f"{raw} leads outside the repository workdir through a symlink")
    target = os.path.realpath(path)
    tmp = f"{target}.tmp-old"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, target)


def old_listing(work: Path, raw: str) -> list[str]:
    """The old Glob's folder listing: the realpath check, then os.scandir of the name."""
    path = os.path.normpath(os.path.join(work, raw))
    if not _within(os.path.realpath(path), os.path.realpath(work)):
        return []
    with os.scandir(path) as entries:
        return [e.name for e in entries]


CONTROL_CAP = 20 * ROUNDS
"""Rounds the old method gets to leak; it needs about 100 (a busy machine may slow the racer)."""


def old_rounds_to_leak(base: Path, racers: list[Racer], pair: tuple[str, str]) -> int:
    """Positive control: the same racer against the old method, until the key is read, the
    outside file written and the outside folder listed; the rounds that took."""
    arena = make_arena(base)
    racer = start(racers, arena.work, *pair)
    name = "d/id_ed25519" if pair[0] == "d" else "k"
    written = "d/authorized_keys" if pair[0] == "d" else "k"
    victim = arena.secret / ("authorized_keys" if pair[0] == "d" else "id_ed25519")
    read = False
    # A file pair has no folder to list, and a write landing on the link would replace
    # the link (ending the race): its control is the read.
    wrote = listed = pair[0] != "d"
    rounds = 0
    while not (read and wrote and listed) and rounds < CONTROL_CAP:
        rounds += 1
        with contextlib.suppress(OSError):
            read = read or "the-users-real-key" in old_read(arena.work, name)
        if not wrote:
            try:
                old_write(arena.work, written, ATTACKER_KEY)
                wrote = victim.read_text(encoding="utf-8") == ATTACKER_KEY
            except OSError:
                pass
        if not listed:
            with contextlib.suppress(OSError):
                listed = OUTSIDE_ONLY in old_listing(arena.work, "d")
    assert racer.stop() > 0
    print(f"{pair[0]}: the old method leaked after {rounds} rounds "
          f"(read {read}, wrote outside {wrote}, listed outside {listed})")  # fmt: skip
    assert read and wrote and listed
    return rounds


@pytest.mark.parametrize("pair", [("d", "d.alt"), ("k", "k.alt")], ids=["folder", "file"])
def test_the_tools_never_reach_outside_while_names_are_swapped(
    tmp_path: Path, race: list[Racer], pair: tuple[str, str]
) -> None:
    needed = old_rounds_to_leak(tmp_path / "old", race, pair)
    rounds = max(ROUNDS, needed)  # at least as many rounds as the old method needed
    arena = make_arena(tmp_path / "new")
    before = snapshot(arena.secret)
    runner = ToolRunner(arena.work, None)
    name = "d/id_ed25519" if pair[0] == "d" else "k"
    written = "d/authorized_keys" if pair[0] == "d" else "k"
    racer = start(race, arena.work, *pair)
    # Reads and Globs first: a Write or Edit that lands while `k` is the link replaces the
    # link itself (inside the worktree), which ends the file race.
    phases = [
        ("Read", {"file_path": name}),
        ("Glob", {"pattern": "d/*"}),
        ("Glob", {"pattern": "**/*"}),
        ("Edit", {"file_path": name, "old_string": "marker", "new_string": "marker"}),
        ("Write", {"file_path": written, "content": ATTACKER_KEY}),
    ]
    seen: dict[str, list[tuple[str, bool]]] = {}
    for tool, args in phases:
        for _ in range(rounds):
            seen.setdefault(tool, []).append(observe(runner, tool, **args))
    swaps = racer.stop()
    assert swaps > 0
    for text, _ in (o for outcomes in seen.values() for o in outcomes):
        assert "the-users-real-key" not in text and OUTSIDE_ONLY not in text, text
        assert "the-users-own-key" not in text, text
    assert snapshot(arena.secret) == before  # no authorized_keys written, no key edited
    # The race was live: some Reads found the link (refused), some the real entry (read).
    reads = seen["Read"]
    refused = sum(text.startswith("OutsideWorkdirError: ") for text, _ in reads)
    done = sum(ok and DECOY.strip() in text for text, ok in reads)
    print(f"{pair[0]}: {swaps} swaps over {rounds} rounds; Reads: {done} read the decoy, {refused} refused, "
          f"{len(reads) - done - refused} other")  # fmt: skip
    assert done > 0 and refused > 0
