"""`frogdesk` on a pseudo-terminal, answering its questions as a person at the keyboard would."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PtyRun:
    """What the terminal showed, how many questions were answered, and stdout when piped."""

    screen: str
    asked: int
    stdout: str


def answer_on_pty(
    args: list[str], question: bytes, answers: list[str], *, pipe_stdout: bool = False
) -> PtyRun:
    """Run `frogdesk ARGS` with stdin and stderr (and stdout, unless piped) on a pseudo-terminal;
    each `question` that appears gets the next answer (a question past the answers fails)."""
    main, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "frogdesk", *args],
        stdin=secondary,
        stdout=subprocess.PIPE if pipe_stdout else secondary,
        stderr=secondary,
        env={**os.environ, "PYTHONPATH": str(Path.cwd())},
        close_fds=True,
    )
    os.close(secondary)
    seen, asked, stdout = b"", 0, ""
    try:
        while True:
            ready, _, _ = select.select([main], [], [], 120)
            if not ready:
                raise AssertionError(f"no output for 120 s; so far: {seen!r}")
            try:
                chunk = os.read(main, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
            while seen.count(question) > asked:
                assert asked < len(answers), f"an unexpected question: {seen!r}"
                os.write(main, answers[asked].encode() + b"\n")
                asked += 1
    finally:
        if proc.stdout is not None:
            stdout = proc.stdout.read().decode()
        proc.wait(timeout=120)
        os.close(main)
    return PtyRun(seen.decode("utf-8", "replace"), asked, stdout)
