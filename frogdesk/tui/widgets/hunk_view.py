"""One reviewable hunk: its decision, and its lines highlighted unified or side by side."""

from __future__ import annotations

from types import MappingProxyType

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual.widgets import Static

from frogdesk.inert import inert_line, inert_text
from frogdesk.review.model import FileChange, Hunk
from frogdesk.review.show import FileFacts, detail_lines
from frogdesk.tui.widgets.diff_render import DiffColours, split_table, unified_table

_MARK = MappingProxyType({"pending": "·", "approved": "✓", "rejected": "✗"})


def _text(lines: tuple[bytes, ...]) -> list[str]:
    return [inert_text(line.decode("utf-8", "replace").rstrip("\n")) for line in lines]


def render_hunk(
    change: FileChange,
    hunk: Hunk,
    style: str,
    split: bool,
    colours: DiffColours,
    facts: FileFacts | None = None,
) -> RenderableType:
    """The body of a hunk in the file's language, removed and added lines on their colours.

    A whole-file hunk shows what it changes: a symlink's target, a mode, a binary's sizes.
    """
    if hunk.kind != "text":
        details = list(detail_lines(change, hunk, facts or FileFacts()))
        return Text("\n".join(inert_line(d) for d in details), style="italic")
    lexer = Syntax.guess_lexer(change.path)
    starts = (max(hunk.old_start, 1), max(hunk.new_start, 1))
    old, new = _text(hunk.old_lines), _text(hunk.new_lines)
    draw = split_table if split else unified_table
    return draw(old, new, starts, lexer, style, colours)


class HunkView(Static):
    """A hunk with its decision mark; selected, approved and rejected show as classes."""

    def __init__(
        self,
        change: FileChange,
        hunk: Hunk,
        style: str,
        colours: DiffColours,
        facts: FileFacts | None = None,
    ) -> None:
        super().__init__(classes="hunk")
        self.change = change
        self.hunk = hunk
        self.style_name = style
        self.colours = colours
        self.facts = facts
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
        body = render_hunk(
            self.change, self.hunk, self.style_name, self.split, self.colours, self.facts
        )
        parts: list[RenderableType] = [header, body]
        if self.conflict:
            parts.append(Text(inert_line(f"conflict: {self.conflict}"), style="bold red"))
        self.update(Group(*parts))

    def on_mount(self) -> None:
        """First draw."""
        self.refresh_view()
