"""Ctrl-C (SIGINT) stops `frogdesk eval` cleanly and prints the exact command that resumes it;
that command, run as printed, finishes every model's run. The progress bar on a terminal."""

from __future__ import annotations

import io
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from frogdesk.commands.eval_progress import EvalMeter, EvalPrinter
from frogdesk.paths import AppPaths
from tests.evals.helpers import FIX, NOTHING, bash, scripts, task_folder

SLOW = [bash("sleep 30"), *FIX]
"""The second task takes long enough for the interrupt to land in it."""


def test_sigint_stops_and_prints_the_command_that_resumes(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    for name in ("a-first", "b-second", "c-third"):
        task_folder(suite, name)
    first = scripts(tmp_path / "first", {"a-first": FIX, "b-second": SLOW, "c-third": NOTHING})
    other = scripts(tmp_path / "other", {"a-first": NOTHING, "b-second": FIX, "c-third": FIX})
    args = [str(suite), "--script", str(first), "--script", str(other), "--no-precheck", "--json"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "frogdesk", "eval", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    evals = AppPaths.default().data_dir / "evals"
    deadline = time.monotonic() + 120
    while not list(evals.glob("*/*/tasks/a-first.json")):
        assert proc.poll() is None and time.monotonic() < deadline, "the first task never ended"
        time.sleep(0.05)
    time.sleep(1.0)  # into the second task's sleep
    started = time.monotonic()
    os.kill(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert time.monotonic() - started < 25, "the interrupt waited for the slow command"
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    lines = err.splitlines()
    said = lines.index(next(line for line in lines if "continue with:" in line))
    command = shlex.split(lines[said + 1])
    (run_dir,) = [p.parent.parent for p in evals.glob("*/*/tasks/a-first.json")]
    assert command[:3] == ["frogdesk", "eval", str(suite)]
    assert command[-2:] == ["--resume", run_dir.name]
    assert [command[i + 1] for i, w in enumerate(command) if w == "--script"] == [
        str(first),
        str(other),
    ]
    stopped = json.loads(out)["runs"]
    assert len(stopped) == 1 and not stopped[0]["finished"]
    assert [t["task"] for t in stopped[0]["tasks"]] == ["a-first"]
    stored = (run_dir / "tasks" / "a-first.json").read_bytes()
    again = subprocess.run(
        [sys.executable, "-m", "frogdesk", *command[1:]],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    runs = json.loads(again.stdout)["runs"]
    assert runs[0]["run_id"] == run_dir.name and all(r["finished"] for r in runs)
    assert [{t["task"]: t["solved"] for t in r["tasks"]} for r in runs] == [
        {"a-first": True, "b-second": True, "c-third": False},
        {"a-first": False, "b-second": True, "c-third": True},
    ]
    assert (run_dir / "tasks" / "a-first.json").read_bytes() == stored  # not run again


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_is_redrawn_in_place_on_a_terminal_and_absent_elsewhere() -> None:
    now = [0.0]
    for stream, bar in ((_Terminal(), True), (io.StringIO(), False)):
        printer = EvalPrinter(stream)
        printer.meter = EvalMeter(4, 2, clock=lambda: now[0])
        printer.meter.start("m.gguf", "a-task")
        printer.draw()
        now[0] += 10
        printer.meter.finish(10)
        printer.meter.start("m.gguf", "b-task")
        printer.meter.attempt = 2
        printer.write("a line")
        text = stream.getvalue()
        if bar:
            assert text.count("\r") >= 3 and text.endswith(
                "1/4  m.gguf: b-task attempt 2/2  ETA 30s"
            )
            assert "\r\x1b[Ka line\n" in text
        else:
            assert text == "a line\n"
