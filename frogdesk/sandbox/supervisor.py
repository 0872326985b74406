"""A tiny subreaper that confines itself, runs one command, and takes every descendant with it.

Run as `python -I -m frogdesk.sandbox.supervisor --config-fd FD`, the configuration
(JSON) readable on FD. Orphaned descendants
(double forks, `setsid` daemons) are re-parented to it, so when the command ends, or when
it is told to stop (SIGTERM, or its parent dies), it can find and kill all of them.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import types
from collections.abc import Sequence

from frogdesk.sandbox.confine import Confinement, apply, become_subreaper
from frogdesk.sandbox.process import kill_tree


def _reap_all() -> None:
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def supervise(argv: Sequence[str], confinement: Confinement) -> int:
    """Confine, start argv, wait for it, kill whatever it left behind; its exit code."""

    def stop(signum: int, frame: types.FrameType | None) -> None:
        kill_tree(os.getpid(), include_root=False)
        _reap_all()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    become_subreaper(signal.SIGTERM)
    try:
        apply(confinement)
    except Exception as exc:
        print(f"frogdesk sandbox: cannot confine the command: {exc}", file=sys.stderr)
        return 125
    try:
        child = os.fork()
    except OSError as exc:
        print(f"frogdesk sandbox: cannot start the command: {exc}", file=sys.stderr)
        return 125
    if child == 0:
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGHUP, signal.SIG_DFL)
            os.execv(argv[0], list(argv))
        except OSError as exc:
            print(f"frogdesk sandbox: cannot run {argv[0]}: {exc}", file=sys.stderr)
        os._exit(127)
    code = 0
    died_of = 0
    while True:
        try:
            pid, status = os.wait()
        except InterruptedError:
            continue
        except ChildProcessError:
            break
        if pid == child:
            code = _exit_code(status)
            died_of = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
            break
    kill_tree(os.getpid(), include_root=False)
    _reap_all()
    if died_of:
        _die_of(died_of)
    return code


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
    """Entry point: `--config-fd FD`, FD holding {"argv": [...], "confinement": {...}}."""
    if len(args) != 2 or args[0] != "--config-fd" or not args[1].isdigit():
        print("usage: python -m frogdesk.sandbox.supervisor --config-fd FD", file=sys.stderr)
        return 2
    try:
        config = read_config(int(args[1]))
        argv, confined = config["argv"], config["confinement"]
        if not isinstance(argv, list) or not isinstance(confined, dict):
            raise ValueError("argv or confinement has the wrong shape")
        confinement = Confinement.from_json(confined)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"frogdesk sandbox: unreadable configuration: {exc}", file=sys.stderr)
        return 125
    return supervise([str(a) for a in argv], confinement)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
