"""Helpers for Pilot tests: wait for a condition without timing assumptions, sample events."""

from __future__ import annotations

from collections.abc import Callable

from textual.pilot import Pilot

from frogdesk.engine.chat import ContentDelta, ReasoningDelta, ToolCall, Usage
from frogdesk.leaf.events import (
    LoopEvent,
    RunFinished,
    StepStarted,
    StepUsage,
    ToolFinished,
    ToolStarted,
)


async def wait_for(
    pilot: Pilot[object], condition: Callable[[], bool], what: str, limit: float = 30.0
) -> None:
    """Let the app run until `condition()` holds; fail naming `what` after `limit` seconds."""
    waited = 0.0
    while not condition():
        if waited >= limit:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)
        waited += 0.02


EDIT = ToolCall(
    "Edit", {"file_path": "app.py", "old_string": "x = 1\n", "new_string": "x = 2\n"}, "call_0_0"
)
BASH = ToolCall("Bash", {"command": "python -c 'print(1)'"}, "call_1_0")


def scripted_run() -> list[LoopEvent]:
    """A three-step run: reason + edit, run a command, answer."""
    return [
        StepStarted(0),
        ReasoningDelta("The bug is in app.py; "),
        ReasoningDelta("x should be 2."),
        ContentDelta("I will **edit** `app.py`."),
        ToolStarted(0, 0, EDIT),
        ToolFinished(0, 0, EDIT, "Edited app.py (1 replacement).", 0.01, True),
        StepUsage(0, Usage(900, 900, 0, 60, decode_seconds=3.0)),
        StepStarted(1),
        ToolStarted(1, 0, BASH),
        ToolFinished(1, 0, BASH, "Exit code: 0\nSTDOUT:\n1\n\nSTDERR:\n", 0.2, True),
        StepUsage(1, Usage(1000, 40, 960, 20, decode_seconds=1.0)),
        StepStarted(2),
        ContentDelta("Fixed: `x` is now 2."),
        StepUsage(2, Usage(1100, 60, 1040, 10, decode_seconds=0.5)),
        RunFinished("agent", "Fixed: `x` is now 2.", n_steps=3),
    ]
