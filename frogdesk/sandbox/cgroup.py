"""A cgroup v2 per command, where one can be had: cgroup.kill ends every process in it at once."""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

PREFIX = "frogdesk-cmd-"
"""Command cgroups are named PREFIX + the supervisor's pid, beside the process that made them."""
EMPTY_WAIT_SECONDS = 5.0
"""How long to wait for a killed cgroup to empty before leaving it (a process stuck in the kernel)."""


def _own_cgroup_dir() -> tuple[Path | None, str]:
    """This process's cgroup v2 folder, or None and why not."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError as exc:
        return None, f"cannot read /proc/self/cgroup: {exc}"
    own = next((line[3:] for line in lines if line.startswith("0::")), None)
    if own is None:
        return None, "no cgroup v2 hierarchy"
    try:
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError as exc:
        return None, f"cannot read /proc/self/mountinfo: {exc}"
    for line in mounts:
        before, _, after = line.partition(" - ")
        fields = before.split()
        if not after.startswith("cgroup2 ") or len(fields) < 5:
            continue
        root, point = fields[3], fields[4]
        # A mount may show only a subtree (root != "/"): our path must lie beneath it.
        if own == root or own.startswith(root.rstrip("/") + "/"):
            return Path(point) / own[len(root) :].lstrip("/"), ""
    return None, "cgroup v2 is not mounted where this process can see its own cgroup"


@dataclass(frozen=True)
class CommandCgroup:
    """One command's cgroup: join it before exec, kill everything in it, remove it."""

    path: Path

    @classmethod
    def for_supervisor(cls, pid: int) -> CommandCgroup | None:
        """The cgroup a supervisor with this pid uses (beside this process's own); None if none."""
        own, _ = _own_cgroup_dir()
        return None if own is None else cls(own / f"{PREFIX}{pid}")

    @classmethod
    def create(cls, pid: int) -> tuple[CommandCgroup | None, str]:
        """Make the cgroup for supervisor `pid` under our own; None and why where we cannot.

        A normal user can only where the cgroup is delegated to them (a systemd user
        service or app scope, not a login session's scope); root can anywhere.
        """
        own, why = _own_cgroup_dir()
        if own is None:
            return None, why
        if not os.access(own / "cgroup.procs", os.W_OK):
            return None, f"the cgroup {own} is not delegated to this user"
        group = cls(own / f"{PREFIX}{pid}")
        try:
            group.path.mkdir()
        except FileExistsError:
            pass  # left by a killed supervisor of the same pid: empty it and take it over
        except OSError as exc:
            return None, f"cannot create a cgroup under {own}: {exc.strerror}"
        if not (group.path / "cgroup.kill").exists():
            group.remove()
            return None, "the kernel has no cgroup.kill (it needs Linux 5.14)"
        return group, ""

    def join(self) -> None:
        """Move the calling process into this cgroup (OSError if it cannot)."""
        with open(self.path / "cgroup.procs", "w", encoding="ascii") as fh:
            fh.write("0")

    def kill(self) -> None:
        """SIGKILL every process in the cgroup; the kernel also kills any forked meanwhile."""
        with contextlib.suppress(OSError), open(self.path / "cgroup.kill", "w") as fh:
            fh.write("1")

    def populated(self) -> bool:
        """Whether any process is still in the cgroup (False once it is gone)."""
        try:
            events = (self.path / "cgroup.events").read_text()
        except OSError:
            return False
        return "populated 1" in events

    def remove(self) -> None:
        """Kill what is in it, wait until it is empty, remove it; left in place if it never empties."""
        self.kill()
        deadline = time.monotonic() + EMPTY_WAIT_SECONDS
        pause = 0.0005
        while self.populated() and time.monotonic() < deadline:
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
        with contextlib.suppress(OSError):
            self.path.rmdir()
