"""A tiny subreaper that runs one confined command and exits only once every descendant is gone.

Run as `python -I -m frogdesk.sandbox.supervisor --config-fd FD`, the configuration
(JSON) readable on FD. Orphaned descendants (double forks, `setsid` daemons) are
re-parented to it, so when the command ends, or when it is told to stop (SIGTERM, or its
parent dies), it kills and reaps until waitpid finds no child. Where a cgroup v2 can be
had, the command also runs in its own cgroup, emptied at once with cgroup.kill.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time
from collections.abc import Sequence

from frogdesk.sandbox.cgroup import CommandCgroup
from frogdesk.sandbox.confine import Confinement, apply, become_subreaper
from frogdesk.sandbox.limitexec import apply_limits
from frogdesk.sandbox.process import kill_descendants


def _reap_ready() -> bool | None:
    """Reap every child that has ended; whether any had, or None when no child is left."""
    reaped = False
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return None
        if pid == 0:
            return reaped
        reaped = True


def end_descendants(group: CommandCgroup | None) -> None:
    """SIGKILL every descendant and reap, again and again, until waitpid says none is left.

    As a subreaper we inherit every orphan below us, so ECHILD means nothing is left. No
    SIGSTOP: a SIGCONT from inside undoes it, while a killed process can never fork again.
    """
    pause = 0.0005
    while True:
        if group is not None:
            group.kill()  # atomic, forks included; the scan below covers what left the cgroup
        kill_descendants(os.getpid())
        reaped = _reap_ready()
        if reaped is None:
            break
        if not reaped:  # SIGKILLed ones take a moment to die (or sit in the kernel)
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
    if group is not None:
        group.remove()


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def _child(argv: Sequence[str], confinement: Confinement, group: CommandCgroup | None) -> None:
    """In the forked child: join the cgroup, confine, exec argv; never returns."""
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, [])  # a blocked mask survives exec
        if group is not None:
            try:
                group.join()  # before Landlock, which would forbid writing /sys/fs/cgroup
            except OSError as exc:
                print(f"frogdesk sandbox: cannot join {group.path}: {exc}", file=sys.stderr)
                os._exit(125)
        try:
            # Confined here, not in the supervisor: outside the Landlock domain the
            # supervisor cannot be signalled or traced by the command (Scope.SIGNAL).
            apply(confinement)
        except Exception as exc:
            print(f"frogdesk sandbox: cannot confine the command: {exc}", file=sys.stderr)
            os._exit(125)
        try:
            os.execv(argv[0], list(argv))
        except OSError as exc:
            print(f"frogdesk sandbox: cannot run {argv[0]}: {exc}", file=sys.stderr)
        os._exit(127)
    except BaseException:
        os._exit(125)


def supervise(
    argv: Sequence[str],
    confinement: Confinement,
    parent: int | None = None,
    use_cgroup: bool = True,
) -> int:
    """Start argv confined, wait for it, kill whatever it left behind; its exit code.

    Ends early on SIGTERM or SIGHUP (also sent when `parent`, FrogDesk, dies); in every
    case it returns only once no descendant is left. `use_cgroup`: False runs without a
    cgroup even where one can be had (the subreaper alone, as for a normal user).
    """
    # Signals stay blocked and are taken with sigwaitinfo: no handler can interrupt the
    # cleanup halfway, and a request that comes early waits, pending, until it is read.
    waited = {signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP}
    signal.pthread_sigmask(signal.SIG_BLOCK, waited)
    become_subreaper(signal.SIGTERM)
    if parent is not None and os.getppid() != parent:
        return 125  # FrogDesk died before the death signal was set: start nothing
    group = CommandCgroup.create(os.getpid())[0] if use_cgroup else None
    try:
        child = os.fork()
    except OSError as exc:
        print(f"frogdesk sandbox: cannot start the command: {exc}", file=sys.stderr)
        end_descendants(group)
        return 125
    if child == 0:
        _child(argv, confinement, group)
    status: int | None = None
    stopped_by = 0
    while status is None:
        status = _reap_until(child)
        if status is None:
            signum = signal.sigwaitinfo(waited).si_signo
            if signum != signal.SIGCHLD:
                stopped_by = signum
                break
    end_descendants(group)
    if stopped_by or status is None:
        os._exit(128 + stopped_by)
    if os.WIFSIGNALED(status):
        _die_of(os.WTERMSIG(status))
    return _exit_code(status)


def _reap_until(child: int) -> int | None:
    """Reap every ended child (orphans included); the wait status of `child` once it has ended."""
    found: int | None = None
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return found if found is not None else 0
        if pid == 0:
            return found
        if pid == child:
            found = status


def _die_of(signum: int) -> None:
    """End by the signal that ended the command, so the caller sees -N as with no supervisor."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # SIGSEGV or SIGABRT: no core file
    if signum != signal.SIGKILL:  # SIGKILL has no handler to reset
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
    os.kill(os.getpid(), signum)


def read_config(fd: int) -> dict[str, object]:
    """The JSON configuration on `fd`, read to its end; the descriptor is closed."""
    chunks: list[bytes] = []
    try:
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(fd)
    config = json.loads(b"".join(chunks))
    if not isinstance(config, dict):
        raise ValueError("the configuration is not a JSON object")
    return config


def main(args: Sequence[str]) -> int:
    """Entry point: `--config-fd FD`, FD holding {"argv": [...], "confinement": {...}}.

    Optional keys: "parent" (FrogDesk's pid: start nothing if it is already gone) and
    "cgroup" (false: no cgroup even where one can be had).
    """
    if len(args) not in (2, 4) or args[0] != "--config-fd" or not args[1].isdigit():
        print(
            "usage: python -m frogdesk.sandbox.supervisor --config-fd FD [--limits JSON]",
            file=sys.stderr,
        )
        return 2
    if len(args) == 4:
        if args[2] != "--limits":
            print("frogdesk sandbox: expected --limits JSON", file=sys.stderr)
            return 2
        try:
            limits = json.loads(args[3])
            if not isinstance(limits, dict):
                raise ValueError("the limits are not a JSON object")
            apply_limits(limits)  # before anything starts: everything inherits them
        except (OSError, ValueError, KeyError, TypeError, AssertionError) as exc:
            # Never run a command without the limits it was promised.
            print(f"frogdesk sandbox: cannot set the command's limits: {exc}", file=sys.stderr)
            return 125
    try:
        config = read_config(int(args[1]))
        argv, confined = config["argv"], config["confinement"]
        parent, use_cgroup = config.get("parent"), config.get("cgroup", True)
        if not isinstance(argv, list) or not isinstance(confined, dict):
            raise ValueError("argv or confinement has the wrong shape")
        if parent is not None and not isinstance(parent, int):
            raise ValueError("parent is not a pid")
        if not isinstance(use_cgroup, bool):
            raise ValueError("cgroup is not true or false")
        confinement = Confinement.from_json(confined)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"frogdesk sandbox: unreadable configuration: {exc}", file=sys.stderr)
        return 125
    return supervise([str(a) for a in argv], confinement, parent, use_cgroup)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
