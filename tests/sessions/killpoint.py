"""Run the real `frogdesk` in a child process and SIGKILL it just before one file-changing step.

Run as a script, this file installs an audit hook and calls `frogdesk.cli.main`; the hook
counts the operations that change files (opening for writing, rename, remove, mkdir, rmdir,
symlink, truncate, chmod, rmtree, starting a subprocess) and kills the process with SIGKILL
just before the one chosen by FD_KILL_AT (its number) or FD_KILL_MATCH (the first whose
description matches the regular expression). With FD_KILL_TRACE=1 it lists every operation
on stderr as `N: description`. Imported, it gives the tests the functions that drive it.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_EVENTS = frozenset(
    {
        "os.rename",
        "os.remove",
        "os.mkdir",
        "os.rmdir",
        "os.symlink",
        "os.truncate",
        "os.chmod",
        "shutil.rmtree",
        "subprocess.Popen",
        "os.link",
    }
)
TRACE_LINE = re.compile(r"(?P<n>[0-9]+): (?P<op>.*)")


def describe(event: str, args: tuple[Any, ...]) -> str | None:
    """The operation an audit event stands for, or None when it changes no file."""
    if event == "open":
        path, mode, flags = args
        writing = any(c in mode for c in "wax+") if isinstance(mode, str) else flags & _WRITE_FLAGS
        return f"open {path}" if writing else None
    if event in _EVENTS:
        return f"{event} " + " ".join(str(a) for a in args[:2])
    return None


def _install_hook() -> None:
    kill_at = int(os.environ.get("FD_KILL_AT", "0"))
    match = re.compile(os.environ["FD_KILL_MATCH"]) if os.environ.get("FD_KILL_MATCH") else None
    trace = os.environ.get("FD_KILL_TRACE") == "1"
    count = 0

    def hook(event: str, args: tuple[Any, ...]) -> None:
        nonlocal count
        op = describe(event, args)
        if op is None:
            return
        count += 1
        if trace:
            os.write(2, f"{count}: {op}\n".encode(errors="replace"))
        if count == kill_at or (match is not None and match.search(op)):
            os.write(2, f"killed before {count}: {op}\n".encode(errors="replace"))
            os.kill(os.getpid(), signal.SIGKILL)

    sys.addaudithook(hook)


def _env(home: Path, **extra: str) -> dict[str, str]:
    import frogdesk

    env = {k: v for k, v in os.environ.items() if not k.startswith(("FROGDESK_", "FD_KILL_"))}
    # the frogdesk under test, wherever this checkout is
    env["PYTHONPATH"] = str(Path(frogdesk.__file__).resolve().parents[1])
    env["FROGDESK_HOME"] = str(home)
    env.update(extra)
    return env


def run_frogdesk(
    args: Sequence[str], home: Path, cwd: Path | None = None, **kill: str
) -> subprocess.CompletedProcess[str]:
    """Run `frogdesk ARGS` with FROGDESK_HOME=home; FD_KILL_* settings as keywords."""
    return subprocess.run(
        [sys.executable, __file__, *args],
        env=_env(home, **kill),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def trace(args: Sequence[str], home: Path, cwd: Path | None = None) -> list[str]:
    """Every file-changing operation of a whole `frogdesk ARGS` run, in order (index 0 is #1)."""
    done = run_frogdesk(args, home, cwd, FD_KILL_TRACE="1")
    assert done.returncode == 0, done.stderr
    return [m["op"] for m in map(TRACE_LINE.fullmatch, done.stderr.splitlines()) if m]


def killed_at(
    args: Sequence[str], home: Path, n: int = 0, cwd: Path | None = None, match: str = ""
) -> str:
    """Run `frogdesk ARGS`, SIGKILLed before operation `n` (or the first matching `match`);
    the operation it died before. Fails when it was not killed."""
    done = run_frogdesk(args, home, cwd, FD_KILL_AT=str(n), FD_KILL_MATCH=match)
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stderr[-2000:])
    return done.stderr.strip().splitlines()[-1]


def let_time_pass(root: Path, seconds: float) -> None:
    """Set back the times of everything under root: the next command comes that much later
    (past the grace FrogDesk gives a temp file whose writer may still be at work)."""
    if not root.exists():
        return  # killed before it made anything
    then = time.time() - seconds
    for path in [root, *root.rglob("*")]:
        if not path.is_symlink():
            os.utime(path, (then, then))


if __name__ == "__main__":
    _install_hook()
    from frogdesk.cli import main

    raise SystemExit(main(sys.argv[1:]))
