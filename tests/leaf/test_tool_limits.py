"""Edit's result size, Bash's smallest timeout, signal deaths and the count of huge output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from frogdesk.engine.chat import ToolCall
from frogdesk.leaf.runner import ToolRunner
from frogdesk.leaf.textfile import MAX_FILE_BYTES
from frogdesk.leaf.tools import bash_timeout
from frogdesk.sandbox.process import MAX_OUTPUT_BYTES
from tests.leaf.test_leaf_parity import leaf_reference

LINES = 2**16
"""Characters of the file each replace_all below multiplies."""


def run(runner: ToolRunner, name: str, args: dict[str, Any]) -> str:
    return runner.run(ToolCall(name, args)).observation


@pytest.mark.parametrize("unit", ["a", "é"], ids=["ascii", "two-byte"])
def test_edit_refuses_a_result_over_the_cap_before_building_it(
    runner: ToolRunner, workdir: Path, unit: str
) -> None:
    """The cap bounded only the file read: 30 MiB of `a` times 30 became a 900 MiB file."""
    (workdir / "f.txt").write_text("a" * LINES, encoding="utf-8")
    # Each of the 65,536 replacements adds 511 bytes: one byte past the cap in all.
    new = unit * (MAX_FILE_BYTES // LINES // len(unit.encode())) + "b"
    args = {"file_path": "f.txt", "old_string": "a", "new_string": new, "replace_all": True}
    assert run(runner, "Edit", args) == (
        f"FileTooLarge: f.txt would be {MAX_FILE_BYTES + LINES} bytes after {LINES} "
        f"replacements; Edit refuses files over {MAX_FILE_BYTES} bytes (replace fewer "
        "occurrences or use a shorter new_string)"
    )
    assert (workdir / "f.txt").read_bytes() == b"a" * LINES  # nothing written
    # Control: the same call whose result is exactly the cap is made.
    args["new_string"] = new[:-1]
    assert run(runner, "Edit", args) == f"Edited f.txt ({LINES} replacements)."
    assert (workdir / "f.txt").stat().st_size == MAX_FILE_BYTES


def test_edit_refuses_one_replacement_over_the_cap(runner: ToolRunner, workdir: Path) -> None:
    (workdir / "f.txt").write_text("x = 1\n", encoding="utf-8")
    args = {"file_path": "f.txt", "old_string": "1", "new_string": "2" * MAX_FILE_BYTES}
    assert run(runner, "Edit", args).startswith(
        f"FileTooLarge: f.txt would be {MAX_FILE_BYTES + 5} bytes after 1 replacement;"
    )
    assert (workdir / "f.txt").read_text() == "x = 1\n"
    args["new_string"] = "2" * (MAX_FILE_BYTES - 5)
    assert run(runner, "Edit", args) == "Edited f.txt (1 replacement)."


@pytest.mark.parametrize(
    ("args", "seconds"),
    [
        ({"timeout": 0.01}, 0.1),
        ({"timeout": "0.05"}, 0.1),
        ({"timeout": -1}, 0.1),
        ({"timeout": "-30"}, 0.1),
        ({"timeout_ms": 20}, 0.1),
        ({"timeout_ms": -5, "timeout": 9}, 0.1),
        # controls: values at or above the minimum, and 0 as "not given"
        ({"timeout": 0.1}, 0.1),
        ({"timeout": 0.25}, 0.25),
        ({"timeout": 0}, 120.0),
        ({}, 120.0),
    ],
)
def test_bash_timeout_has_leafs_minimum(args: dict[str, Any], seconds: float) -> None:
    assert bash_timeout(args) == pytest.approx(seconds)


@pytest.mark.parametrize("timeout", [0.01, -1])
def test_tiny_and_negative_timeouts_run_for_the_minimum(runner: ToolRunner, timeout: float) -> None:
    """0.01 said `Timed out after 0.0s`; -1 waited for the 120 s default."""
    out = run(runner, "Bash", {"command": "echo started; sleep 5; echo done", "timeout": timeout})
    assert out == "Timed out after 0.1s\nSTDOUT:\nstarted\n\nSTDERR:\n"


@pytest.mark.parametrize(
    "command",
    ["kill -9 $$", "kill -TERM $$", "exit 137", "exec 2>&-; sh -c 'kill -9 $$'; exit $?"],
    ids=["sigkill", "sigterm", "exit-137", "child-killed"],
)
def test_signal_deaths_are_reported_as_leaf_does(
    runner: ToolRunner, workdir: Path, command: str
) -> None:
    """Leaf shows subprocess's returncode: -9 for bash killed by SIGKILL, not bash's 137.

    The controls: an exit with 137, and a killed child whose bash exits with its `$?` (137).
    """
    ours = run(runner, "Bash", {"command": command})
    assert ours == leaf_reference(workdir, "Bash", {"command": command})
    expected = {"kill -9 $$": "-9", "kill -TERM $$": "-15"}.get(command, "137")
    assert ours.startswith(f"Exit code: {expected}\n")


@pytest.mark.parametrize(
    "command",
    [
        "head -c 20000000 /dev/zero | tr '\\0' a",
        "head -c 20000000 /dev/zero | tr '\\0' a >&2; echo out",
        # a character split by the cap, and more characters than bytes past it
        "python3 -c \"import sys; sys.stdout.write('a' + 'é' * 6000000)\"",
        # control: output under the per-stream cap
        "head -c 100000 /dev/zero | tr '\\0' a",
    ],
    ids=["stdout", "stderr", "two-byte", "under-cap"],
)
def test_truncation_counts_every_character_written(
    runner: ToolRunner, workdir: Path, command: str
) -> None:
    """The count said 8,358,678 for 20 MB: only what the 8 MiB per-stream buffer kept."""
    ours = run(runner, "Bash", {"command": command})
    assert ours == leaf_reference(workdir, "Bash", {"command": command})
    assert MAX_OUTPUT_BYTES < 20_000_000
