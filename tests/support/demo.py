"""Fixed data for snapshots and screenshots: a bartowski-like listing and a mid-run session."""

from __future__ import annotations

from frogdesk.engine.chat import ContentDelta, ReasoningDelta, ToolCall, Usage
from frogdesk.leaf.events import (
    LoopEvent,
    RunFinished,
    StepStarted,
    StepUsage,
    ToolFinished,
    ToolStarted,
)
from frogdesk.models.catalog import repo_rows
from frogdesk.models.listing import HubFile, RepoListing
from frogdesk.models.system_memory import MemoryAvailable
from frogdesk.tui.screens.setup import ListingReady

REPO = "bartowski/FrogNano-4B-2609-GGUF"
SIZES = {
    "IQ2_M": 1.69,
    "IQ3_M": 2.07,
    "Q3_K_M": 2.21,
    "IQ4_XS": 2.47,
    "Q4_K_M": 2.80,
    "Q5_K_M": 3.22,
    "Q6_K": 3.72,
    "Q8_0": 4.80,
}


def demo_listing() -> ListingReady:
    """The picker's content for a 16 GB laptop without a GPU, independent of this machine."""
    files = tuple(
        HubFile(f"FrogNano-4B-2609-{quant}.gguf", int(gb * 1e9), "0" * 64, "0" * 40)
        for quant, gb in SIZES.items()
    )
    listing = RepoListing(REPO, "main", "https://huggingface.co", files, 0.0)
    memory = MemoryAvailable(ram_total=16_000_000_000, ram_free=11_000_000_000)
    rows = repo_rows(listing, [], memory, 32768)
    return ListingReady(listing, rows, {row.label: "not measured" for row in rows})


EDIT = ToolCall(
    "Edit",
    {
        "file_path": "calc.py",
        "old_string": "    return a - b\n",
        "new_string": "    return a + b\n",
    },
    "call_1_0",
)
TESTS = ToolCall("Bash", {"command": "python -m pytest -q tests/test_calc.py"}, "call_2_0")


def mid_run() -> list[LoopEvent]:
    """A run that is executing its test command (the replay pauses before the last event)."""
    return [
        StepStarted(0),
        ReasoningDelta("The test expects add(2, 3) == 5 but add subtracts. "),
        ReasoningDelta("Fix the operator in calc.py, then run the tests."),
        ContentDelta("`add()` subtracts instead of adding; fixing the operator in **calc.py**."),
        ToolStarted(0, 0, EDIT),
        ToolFinished(0, 0, EDIT, "Edited calc.py (1 replacement).", 0.01, True),
        StepUsage(0, Usage(2410, 2410, 0, 96, decode_seconds=5.3)),
        StepStarted(1),
        ContentDelta("Running the tests."),
        ToolStarted(1, 0, TESTS),
        StepUsage(1, Usage(2560, 150, 2410, 24, decode_seconds=1.3)),
        RunFinished("agent", "never reached"),
    ]
