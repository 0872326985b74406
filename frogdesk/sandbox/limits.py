"""Resource limits of one sandboxed command: processes, memory, disk, and the OOM killer's choice.

Each command runs under `limitexec` (it joins the command's cgroups, sets rlimits and
oom_score_adj, then execs the level's launcher), while a watcher thread here stops the
command the moment it reaches the process cap or a disk limit. Each limit reached puts
one `frogdesk: ...` line in the command's stderr (the model reads it) and says it to the
user as a notice.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import frogdesk
from frogdesk.logfile import say_notice
from frogdesk.sandbox.cgroups import Group, make_group
from frogdesk.sandbox.diskwatch import SLACK, DiskBudget, baseline, file_systems
from frogdesk.sandbox.shells.protocol import ShellResult
from frogdesk.sizes import memory_size

if TYPE_CHECKING:
    from frogdesk.config import SandboxSettings

WATCH_SECONDS = 0.01
"""How often the watcher looks; statvfs and one small cgroup file cost microseconds."""
KILL_PASSES = 50
"""Rounds of killing a stopped command's processes (a fork bomb refills the freed slots)."""
FILE_SIZE_SLACK = 2 * SLACK
"""RLIMIT_FSIZE sits past the disk headroom and the watcher's slack, so the watcher sees the limit reached."""
_LAUNCHER = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from frogdesk.sandbox.limitexec import main; sys.exit(main(sys.argv[2:]))"
)


@dataclass(frozen=True)
class CommandLimits:
    """What one command may use; 0 turns a limit off (memory: 0 is half of the RAM)."""

    max_processes: int = 512
    """Processes and threads running at once; forking past it fails and stops the command."""
    memory: int = 0
    """Bytes of memory for all the command's processes together; 0 means half of the RAM."""
    session_disk_cap: int = 8 << 30
    """Bytes a session may add on disk (worktree, private home and tmp) since its first command."""
    disk_reserve: int = 512 << 20
    """Bytes kept free on each file system a command can write; the command stops below it."""
    tmpfs_size: int = 64 << 20
    """Size of each in-memory folder of the bwrap level (/dev/shm, the hidden home, /run)."""

    def memory_bytes(self) -> int:
        """The memory cap in bytes, resolving 0 to half of the RAM."""
        if self.memory:
            return self.memory
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2


def _user_processes() -> int:
    """Processes (threads included, as RLIMIT_NPROC counts them) of this real uid now."""
    uid, count = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry.name}/task"))
    return count


@dataclass
class _Setup:
    """The groups one command runs in, what its launcher sets, and what it falls back to."""

    pids: Group | None = None
    memory: Group | None = None
    rlimits: dict[str, int] = field(default_factory=dict)
    fallbacks: dict[str, str] = field(default_factory=dict)
    """"processes" or "memory" -> why no group could be had."""


def _setup(limits: CommandLimits, headroom: int | None) -> _Setup:
    """Make the command's groups; rlimits where no group can be had (weaker, and said so)."""
    out = _Setup()
    if limits.max_processes > 0:
        cap = limits.max_processes
        out.pids, why = make_group("pids", {1: {"pids.max": cap}, 2: {"pids.max": cap}})
        if out.pids is None:
            # Counts every process of this uid, so it is set relative to how many run now.
            out.rlimits["nproc"] = _user_processes() + cap
            out.fallbacks["processes"] = why
    if limits.memory >= 0:
        cap = limits.memory_bytes()
        files = {1: {"memory.limit_in_bytes": cap}, 2: {"memory.max": cap}}
        out.memory, why = make_group("memory", files)
        if out.memory is None:
            out.rlimits["data"] = cap
            out.fallbacks["memory"] = why
    if headroom is not None:
        out.rlimits["fsize"] = max(headroom, 0) + FILE_SIZE_SLACK
    return out


def launcher_argv(setup: _Setup, argv: Sequence[str], *, supervised: bool = False) -> list[str]:
    """argv run under limitexec, which sets the limits and then execs it in place.

    FrogDesk's supervisor sets them itself (`--limits JSON` after its own arguments), first
    thing, before it starts anything: one Python start per command instead of two.
    """
    procs = [str(g.procs) for g in (setup.pids, setup.memory) if g is not None]
    config = json.dumps({"procs": procs, "rlimits": setup.rlimits})
    if supervised:
        return [*argv, "--limits", config]
    package_root = str(Path(frogdesk.__file__).resolve().parent.parent)
    return [sys.executable, "-I", "-c", _LAUNCHER, package_root, "--limits", config, "--", *argv]


def _oom_kills(group: Group | None) -> int:
    if group is None:
        return 0
    name = "memory.oom_control" if group.version == 1 else "memory.events"
    return group.counter(name, "oom_kill")


class _Watcher:
    """A thread that forwards the caller's cancel and stops the command at a limit."""

    def __init__(
        self, limits: CommandLimits, setup: _Setup, disk: DiskBudget, cancel: threading.Event | None
    ) -> None:
        self.limits, self.setup, self.disk, self.cancel = limits, setup, disk, cancel
        self.stop = threading.Event()
        self.done = threading.Event()
        self.reason: str | None = None
        self.thread = threading.Thread(target=self._loop, name="frogdesk-limits", daemon=True)

    def check(self, final: bool = False) -> str | None:
        """The limit the command has reached, in words; None while it has not."""
        pids = self.setup.pids
        if pids is not None and pids.counter("pids.events", "max") > 0:
            return (
                f"it tried to run more than {self.limits.max_processes} processes at once "
                "(bash_max_processes)"
            )
        return self.disk.breach(final)

    def _loop(self) -> None:
        while not self.done.wait(WATCH_SECONDS):
            if self.cancel is not None and self.cancel.is_set():
                self.stop.set()
                return
            reason = self.check()
            if reason is not None:
                self.reason = reason
                self._end()
                self.stop.set()
                return

    def _end(self) -> None:
        """SIGKILL every process in the group but the launched one, until none is left.

        At once, not when the shell's loop next looks: a disk filler keeps writing until
        then. The launched process (a supervisor, or bwrap) is left to end its command the
        way it always does, so nothing it is cleaning up is pulled from under it.
        """
        group = self.setup.pids or self.setup.memory
        if group is None:
            return
        for _ in range(KILL_PASSES):
            members = [p for p in group.pids() if _parent_of(p) != os.getpid()]
            if not members:
                return
            for pid in members:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)


def _parent_of(pid: int) -> int:
    """pid's parent, or 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return 0
    fields = stat[stat.rfind(b")") + 2 :].split()
    return int(fields[1]) if len(fields) > 1 else 0


def _with_lines(result: ShellResult, lines: list[str], stopped: bool) -> ShellResult:
    """The result with each limit's line at the end of its stderr (and said to the user)."""
    if not lines:
        return result
    for line in lines:
        say_notice(line)
    stderr = result.stderr + ("\n" if result.stderr and not result.stderr.endswith("\n") else "")
    stderr += "".join(f"frogdesk: {line}\n" for line in lines)
    if stopped:
        return replace(result, stderr=stderr, cancelled=False, exit_code=-1)
    return replace(result, stderr=stderr)


Runner = Callable[[list[str], threading.Event | None], ShellResult]
"""Runs (argv, an event that stops it) and returns what the command did."""


def run_limited(
    limits: CommandLimits,
    roots: Sequence[Path],
    session_folder: Path,
    argv: Sequence[str],
    cancel: threading.Event | None,
    run: Runner,
    *,
    supervised: bool = False,
) -> ShellResult:
    """Run a launch under the limits: groups made, watched, and removed after.

    roots are where the session's commands can write; session_folder is the session's
    private folder (commands cannot write it), where its disk baseline is kept.
    """
    roots = list(roots)
    first, now = baseline(session_folder, roots) if limits.session_disk_cap else (0, 0)
    disk = DiskBudget(
        file_systems(roots),
        limits.disk_reserve,
        limits.session_disk_cap,
        held=max(now - first, 0),
        roots=tuple(roots),
        start=now,
    )
    setup = _setup(limits, disk.headroom())
    watcher = _Watcher(limits, setup, disk, cancel)
    oom0 = _oom_kills(setup.memory)
    watcher.thread.start()
    try:
        result = run(launcher_argv(setup, argv, supervised=supervised), watcher.stop)
    finally:
        watcher.done.set()
        watcher.thread.join()
        reason = watcher.reason or watcher.check(final=True)
        kills = _oom_kills(setup.memory) - oom0
        for group in (setup.pids, setup.memory):
            if group is not None:
                group.remove()
    lines = [f"the command was stopped: {reason}"] if reason else []
    if kills > 0:
        lines.append(
            f"{kills} process(es) of the command were killed: its memory cap of "
            f"{memory_size(limits.memory_bytes())} was reached (bash_max_memory)"
        )
    return _with_lines(result, lines, stopped=reason is not None)


def limit_notes(limits: CommandLimits) -> list[str]:
    """What the user must know about how this machine enforces the limits (weaker fallbacks)."""
    setup = _setup(limits, None)
    for group in (setup.pids, setup.memory):
        if group is not None:
            group.remove()
    notes: list[str] = []
    why = setup.fallbacks.get("processes")
    if why is not None and os.getuid() == 0:
        notes.append(
            f"Commands' processes are not capped: {why}, and RLIMIT_NPROC does not bind root."
        )
    elif why is not None:
        notes.append(f"Commands' processes are capped by RLIMIT_NPROC only: {why}.")
    why = setup.fallbacks.get("memory")
    if why is not None:
        notes.append(
            f"Commands' memory is capped per process only (RLIMIT_DATA, "
            f"{memory_size(limits.memory_bytes())}): {why}."
        )
    return notes


def command_limits(settings: SandboxSettings) -> CommandLimits:
    """The limits the user's `[sandbox]` settings ask for."""
    return CommandLimits(
        max_processes=settings.bash_max_processes,
        memory=settings.bash_max_memory,
        session_disk_cap=settings.session_disk_cap,
        disk_reserve=settings.disk_reserve,
        tmpfs_size=settings.tmpfs_size,
    )
