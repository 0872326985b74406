"""Run the real `frogdesk` in a child process and SIGKILL it just before one file-changing step.

Run as a script, this file installs an audit hook and calls `frogdesk.cli.main`. The hook
counts the operations that can change a file or start a process (an open for writing,
rename, remove, mkdir, rmdir, symlink, link, truncate, chmod, rmtree, a subprocess) and
kills the process with SIGKILL just before the one chosen by its number or by the first
description matching a pattern (or its Nth match): no `finally`, no `atexit`, exactly a `kill -9` at that
instant. Traced, it lists every operation on stderr, so a test can sweep all of them.
Imported, it gives the tests the functions that drive it.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KILL_AT_ENV = "FROGDESK_TEST_KILL_AT"
"""The 1-based number of the operation to die before (unset or 0: never)."""
KILL_MATCH_ENV = "FROGDESK_TEST_KILL_MATCH"
"""A regular expression: die before the first operation whose description matches it."""
KILL_NTH_ENV = "FROGDESK_TEST_KILL_NTH"
"""With a pattern: die before its Nth match instead of its first (1-based)."""
TRACE_ENV = "FROGDESK_TEST_KILL_TRACE"
"""Set to 1 to have each counted operation listed on stderr."""

_PROJECT = Path(__file__).resolve().parents[2]
"""The checkout these tests belong to: the child imports this frogdesk, not an installed one."""
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_EVENTS = frozenset(
    {
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
)
_TRACE = re.compile(r"OP (?P<n>[0-9]+): (?P<op>.*)")
_KILLED = "KILLED before "


@dataclass(frozen=True)
class Run:
    """One child run: its exit code (-9 when killed), its output, and what it died before."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def killed(self) -> bool:
        """True when the child died of the SIGKILL."""
        return self.returncode == -signal.SIGKILL

    @property
    def killed_before(self) -> str:
        """`N: operation` the child was killed before ("" when it was not)."""
        marks = [line for line in self.stderr.splitlines() if line.startswith(_KILLED)]
        return marks[-1].removeprefix(_KILLED) if marks else ""


def describe(event: str, args: tuple[Any, ...]) -> str | None:
    """The operation an audit event stands for, or None when it changes no file."""
    if event == "open":
        path, mode, flags = args
        writing = any(c in mode for c in "wax+") if isinstance(mode, str) else flags & _WRITE_FLAGS
        return f"open {path}" if writing else None
    if event in _EVENTS:
        return f"{event} " + " ".join(str(a) for a in args[:2])
    return None


def run_frogdesk(
    args: Sequence[str],
    home: Path | None = None,
    cwd: Path | None = None,
    *,
    kill_at: int = 0,
    match: str = "",
    nth: int = 1,
    trace: bool = False,
) -> Run:
    """Run `frogdesk ARGS` in a child (FROGDESK_HOME=home, or the test's own), SIGKILLed
    before operation `kill_at` or the `nth` matching `match` (neither: never).

    A pattern names its point whatever else the run does first: a cache written or not
    (the review's blob cache waits for files to settle) shifts every later number."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FROGDESK_TEST_KILL")}
    if home is not None:
        env["FROGDESK_HOME"] = str(home)
    env.update(
        {
            KILL_AT_ENV: str(kill_at),
            KILL_MATCH_ENV: match,
            KILL_NTH_ENV: str(nth),
            TRACE_ENV: "1" if trace else "0",
            "PYTHONPATH": str(_PROJECT),
            "PYTHONDONTWRITEBYTECODE": "1",  # a .pyc written on import would shift the count
        }
    )
    done = subprocess.run(
        [sys.executable, __file__, *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def trace(args: Sequence[str], home: Path | None = None, cwd: Path | None = None) -> list[str]:
    """Every file-changing operation of a whole `frogdesk ARGS` run, in order (index 0 is #1).

    It runs for real: the caller puts things back before sweeping.
    """
    done = run_frogdesk(args, home, cwd, trace=True)
    assert done.returncode == 0, done.stderr
    return [m["op"] for m in map(_TRACE.fullmatch, done.stderr.splitlines()) if m]


def killed_at(
    args: Sequence[str], home: Path | None = None, n: int = 0, cwd: Path | None = None,
    match: str = "", nth: int = 1,
) -> str:  # fmt: skip
    """Run `frogdesk ARGS`, SIGKILLed before operation `n` (or the `nth` matching `match`);
    `N: operation` it died before. Fails when it was not killed."""
    done = run_frogdesk(args, home, cwd, kill_at=n, match=match, nth=nth)
    assert done.killed, (done.returncode, done.stderr[-2000:])
    return done.killed_before


def let_time_pass(root: Path, seconds: float) -> None:
    """Set back the times of everything under root: the next command comes that much later
    (past the grace FrogDesk gives a temp file whose writer may still be at work)."""
    if not root.exists():
        return  # killed before it made anything
    then = time.time() - seconds
    for path in [root, *root.rglob("*")]:
        if not path.is_symlink():
            os.utime(path, (then, then))


def _install_hook() -> None:
    kill_at = int(os.environ.get(KILL_AT_ENV, "0") or 0)
    pattern = os.environ.get(KILL_MATCH_ENV, "")
    match = re.compile(pattern) if pattern else None
    nth = int(os.environ.get(KILL_NTH_ENV, "1") or 1)
    tracing = os.environ.get(TRACE_ENV) == "1"
    count = matched = 0

    def hook(event: str, args: tuple[Any, ...]) -> None:
        nonlocal count, matched
        op = describe(event, args)
        if op is None:
            return
        count += 1
        if tracing:
            os.write(2, f"OP {count}: {op}\n".encode(errors="replace"))
        hit = match is not None and match.search(op) is not None
        matched += hit
        if count == kill_at or (hit and matched == nth):
            os.write(2, f"{_KILLED}{count}: {op}\n".encode(errors="replace"))
            os.kill(os.getpid(), signal.SIGKILL)

    sys.addaudithook(hook)


if __name__ == "__main__":
    _install_hook()
    from frogdesk.cli import main

    raise SystemExit(main(sys.argv[1:]))
