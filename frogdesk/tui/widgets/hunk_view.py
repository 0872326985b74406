"""One reviewable hunk: its decision, and its lines highlighted unified or side by side."""

from __future__ import annotations

import difflib
from types import MappingProxyType

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from frogdesk.inert import inert_line, inert_text
from frogdesk.review.model import FileChange, Hunk

_MARK = MappingProxyType({"pending": "·", "approved": "✓", "rejected": "✗"})


def _text(lines: tuple[bytes, ...]) -> list[str]:
    return [inert_text(line.decode("utf-8", "replace").rstrip("\n")) for line in lines]


def unified_lines(hunk: Hunk) -> list[str]:
    """The hunk's lines as unified diff lines (' ', '-', '+' prefixes), without headers."""
    old, new = _text(hunk.old_lines), _text(hunk.new_lines)
    diff = difflib.unified_diff(old, new, n=max(len(old), len(new)), lineterm="")
    return [line for line in diff if not line.startswith(("---", "+++", "@@"))]


def render_hunk(change: FileChange, hunk: Hunk, style: str, split: bool) -> RenderableType:
    """The body of a hunk: a highlighted diff, or base and new side by side in the file's language."""
    if hunk.kind != "text":
        return Text(inert_line(hunk.header), style="italic")
    if not split:
        return Syntax(
            "\n".join(unified_lines(hunk)),
            "diff",
            theme=style,
            background_color="default",
            word_wrap=True,
        )
    lexer = Syntax.guess_lexer(change.path)
    table = Table.grid(expand=True, padding=(0, 1))
    table.add_column(ratio=1)
    table.add_column(ratio=1)
    old = Syntax(
        "\n".join(_text(hunk.old_lines)),
        lexer,
        theme=style,
        background_color="default",
        line_numbers=True,
        start_line=max(hunk.old_start, 1),
    )
    new = Syntax(
        "\n".join(_text(hunk.new_lines)),
        lexer,
        theme=style,
        background_color="default",
        line_numbers=True,
        start_line=max(hunk.new_start, 1),
    )
    table.add_row(old, new)
    return table


class HunkView(Static):
    """A hunk with its decision mark; selected, approved and rejected show as classes."""

    def __init__(self, change: FileChange, hunk: Hunk, style: str) -> None:
        super().__init__(classes="hunk")
        self.change = change
        self.hunk = hunk
        self.style_name = style
        self.decision = "pending"
        self.split = False
        self.conflict = ""
        self.edited = False

    def refresh_view(self) -> None:
        """Redraw from the current decision, layout and conflict."""
        for name in ("pending", "approved", "rejected"):
            self.set_class(self.decision == name, f"-{name}")
        edited = " (edited)" if self.edited else ""
        header = Text(
            inert_line(f"{_MARK[self.decision]} {self.change.path}  {self.hunk.header}{edited}"),
            style="bold",
        )
        parts: list[RenderableType] = [
            header,
            render_hunk(self.change, self.hunk, self.style_name, self.split),
        ]
        if self.conflict:
            parts.append(Text(inert_line(f"conflict: {self.conflict}"), style="bold red"))
        self.update(Group(*parts))

    def on_mount(self) -> None:
        """First draw."""
        self.refresh_view()
