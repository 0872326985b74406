"""A compact card for one tool call: tool, main argument, status, elapsed; observation on demand."""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Any

from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from frogdesk.engine.chat import ToolCall
from frogdesk.inert import inert_line
from frogdesk.leaf.events import CommandOutcome
from frogdesk.tui.untrusted import plain_block, plain_line
from frogdesk.tui.widgets.diffs import diff_syntax, edit_diff

_MAIN_ARGUMENT = MappingProxyType(
    {
        "Read": "file_path",
        "Write": "file_path",
        "Edit": "file_path",
        "Glob": "pattern",
        "Bash": "command",
    }
)

_BLANKS = re.compile("[ \t\n]+")


def main_argument(call: ToolCall) -> str:
    """The argument that says what a call does, on one line, every control character visible."""
    key = _MAIN_ARGUMENT.get(call.name, "")
    value: Any = call.arguments.get(key) if key else None
    if value is None and call.name in {"Read", "Write", "Edit"}:
        value = call.arguments.get("path")
    if value is None:
        value = next(iter(call.arguments.values()), "") if call.arguments else ""
    # Runs of spaces and newlines fold to one space; anything else invisible is shown escaped.
    text = inert_line(_BLANKS.sub(" ", str(value)).strip(" "))
    return text if len(text) <= 70 else text[:69] + "…"


def card_title(call: ToolCall, status: str, elapsed: float | None) -> str:
    """The card's one-line title as plain text (shown literally, never as markup)."""
    timing = f" · {elapsed:.1f}s" if elapsed is not None else ""
    return f"{call.name}  {main_argument(call)}  · {status}{timing}"


def finished_status(ok: bool, command: CommandOutcome | None) -> tuple[str, bool]:
    """The card's status word and whether it reads as success: a Bash command that exited
    non-zero, was stopped or timed out says so rather than `ok`."""
    if not ok:
        return "error", False
    if command is None or command.succeeded:
        return "ok", True
    return command.describe(), False


class ToolCard(Collapsible):
    """One tool call; collapsed by default, expands to its observation (and diff for edits)."""

    def __init__(self, call: ToolCall, syntax_style: str) -> None:
        children: list[Widget] = []
        if call.name in {"Edit", "Write"}:
            children.append(
                Static(diff_syntax(edit_diff(call.arguments), syntax_style), classes="tool-diff")
            )
        self._observation_view = Static("…", classes="tool-observation", markup=False)
        children.append(VerticalScroll(self._observation_view, classes="tool-output"))
        # The title set here would be read as markup; the real one is set below as plain text.
        super().__init__(*children, title="", collapsed=True, classes="tool-card -running")
        self.call = call
        self.title = card_title(call, "running", None)
        self.observation: str | None = None

    def _watch_title(self, title: str) -> None:
        # Collapsible parses its title as markup; a model's command must stay literal text.
        self._title.label = plain_line(title)

    def finish(
        self, observation: str, elapsed: float, ok: bool, command: CommandOutcome | None = None
    ) -> None:
        """Show the result (UI thread); a Bash command's outcome says how it ended."""
        self.observation = observation
        status, good = finished_status(ok, command)
        self.title = card_title(self.call, status, elapsed)
        self.remove_class("-running")
        self.add_class("-ok" if good else "-error")
        self._observation_view.update(plain_block(observation))
