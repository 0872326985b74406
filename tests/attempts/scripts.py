"""Scripted attempts at the calc repository: one right fix, one wrong fix, one that gives up."""

from __future__ import annotations

from pathlib import Path

from tests.support.scripted import call, write_script

CHECK = "python3 -B -m unittest -q test_calc"
"""The repository's own test, as the check command."""


def edit_then_answer(fix: str, answer: str) -> list[str]:
    """Two replies: edit add() to `fix`, then a final answer."""
    return [
        "Fix it.\n</think>\n\n"
        + call("Edit", file_path="calc.py", old_string="return a - b", new_string=fix),
        f"Done.\n</think>\n\n{answer}",
    ]


def three_scripts(folder: Path) -> list[Path]:
    """Attempt 1 multiplies (fails the check), 2 adds (passes), 3 answers without a change."""
    return [
        write_script(folder / "wrong.jsonl", edit_then_answer("return a * b", "Multiplied.")),
        write_script(folder / "right.jsonl", edit_then_answer("return a + b", "Added.")),
        write_script(folder / "idle.jsonl", ["Nothing to do.\n</think>\n\nNo change needed."]),
    ]
