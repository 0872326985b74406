"""Run a real `frogdesk` process and SIGKILL it just before its Nth file-changing operation.

The child counts, through a Python audit hook, every operation that can change a file or
start a process (an open for writing, rename, remove, mkdir, rmdir, symlink, link,
truncate, chmod, rmtree, subprocess), and kills itself with SIGKILL right before the
chosen one: no `finally`, no `atexit`, exactly a `kill -9` at that instant. Run without a
number, it lists those operations, so a test can sweep every one of them.

This file is also the child's entry point: `python sigkill.py ARGS...` runs `frogdesk ARGS`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

KILL_AT_ENV = "SIGKILL_TEST_AT"
"""The 1-based number of the operation to die before (unset or 0: never)."""
TRACE_ENV = "SIGKILL_TEST_TRACE"
"""Set to 1 to have each counted operation listed on stderr."""

_PROJECT = Path(__file__).resolve().parents[2]
"""The checkout these tests belong to: the child imports this frogdesk, not an installed one."""
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_CHANGES = {
    "os.rename",
    "os.remove",
    "os.mkdir",
    "os.rmdir",
    "os.symlink",
    "os.link",
    "os.truncate",
    "os.chmod",
    "shutil.rmtree",
    "subprocess.Popen",
}


@dataclass(frozen=True)
class Run:
    """One child run: its exit code (-9 when killed), its output, and what it was killed before."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def killed(self) -> bool:
        """True when the child died of the SIGKILL."""
        return self.returncode == -signal.SIGKILL

    @property
    def killed_before(self) -> str:
        """The operation the child was killed before ("" when it was not)."""
        marks = [line for line in self.stderr.splitlines() if line.startswith("KILLED before ")]
        return marks[-1].removeprefix("KILLED before ") if marks else ""


def frogdesk(args: Sequence[str], *, kill_at: int = 0, cwd: Path | None = None) -> Run:
    """Run `frogdesk ARGS` in a child, SIGKILLed before its `kill_at`th operation (0: never)."""
    return _run(args, kill_at=kill_at, trace=False, cwd=cwd)


def operations(args: Sequence[str], *, cwd: Path | None = None) -> list[str]:
    """The file-changing operations an uninterrupted `frogdesk ARGS` makes, in order.

    It runs for real: the caller puts the repository back before sweeping.
    """
    run = _run(args, kill_at=0, trace=True, cwd=cwd)
    assert run.returncode == 0, run.stderr
    return [line.split(": ", 1)[1] for line in run.stderr.splitlines() if line.startswith("OP ")]


def _run(args: Sequence[str], *, kill_at: int, trace: bool, cwd: Path | None) -> Run:
    env = dict(os.environ)
    env.update(
        {
            KILL_AT_ENV: str(kill_at),
            TRACE_ENV: "1" if trace else "0",
            "PYTHONPATH": str(_PROJECT),
            "PYTHONDONTWRITEBYTECODE": "1",  # a .pyc written on import would shift the count
        }
    )
    proc = subprocess.run(
        [sys.executable, __file__, *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def _counts(event: str, args: tuple[object, ...]) -> bool:
    """True for an audit event that can change a file or start a process."""
    if event == "open":
        path, mode, flags = args[0], args[1], args[2]
        if isinstance(mode, str):
            return any(c in mode for c in "wax+")
        # The session's lock file is opened on every command and changes nothing.
        return bool(isinstance(flags, int) and flags & _WRITE_FLAGS) and not str(path).endswith(
            ".lock"
        )
    return event in _CHANGES


def _child(argv: list[str]) -> int:
    """Count the operations of `frogdesk ARGV`; die before the chosen one."""
    kill_at = int(os.environ.get(KILL_AT_ENV, "0") or 0)
    trace = os.environ.get(TRACE_ENV) == "1"
    seen = 0

    def hook(event: str, args: tuple[object, ...]) -> None:
        nonlocal seen
        if not _counts(event, args):
            return
        seen += 1
        label = f"{seen}: {event} {[str(a)[-300:] for a in args[:2]]}"
        if trace:
            os.write(2, f"OP {label}\n".encode())
        if kill_at and seen == kill_at:
            os.write(2, f"KILLED before {label}\n".encode())
            os.kill(os.getpid(), signal.SIGKILL)

    sys.addaudithook(hook)
    from frogdesk.cli import main

    return main(argv)


if __name__ == "__main__":
    raise SystemExit(_child(sys.argv[1:]))
