"""A hunk's lines as a diff viewer draws them: red and green line backgrounds, changed words brighter."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from rich.console import RenderableType
from rich.padding import Padding
from rich.style import Style
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Span, Text

RowKind = Literal["context", "removed", "added", "changed"]

# Below this similarity a removed and an added line are two different lines, not an edit of one:
# highlighting "changed words" in them would colour nearly everything and help no one.
_WORD_DIFF_MIN_RATIO = 0.4


@dataclass(frozen=True)
class DiffColours:
    """Backgrounds of removed and added lines, and of the changed parts within them."""

    removed: str
    added: str
    removed_word: str
    added_word: str


@dataclass(frozen=True)
class DiffRow:
    """One displayed row: a base line, a new line, or both (context, or an edited line)."""

    kind: RowKind
    old: int | None
    """Index into the base lines, or None."""
    new: int | None
    """Index into the new lines, or None."""


def diff_rows(old: list[str], new: list[str]) -> list[DiffRow]:
    """The hunk's rows in order; a replaced block pairs its lines one to one as `changed`."""
    rows: list[DiffRow] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows.extend(DiffRow("context", i1 + k, j1 + k) for k in range(i2 - i1))
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        rows.extend(DiffRow("changed", i1 + k, j1 + k) for k in range(paired))
        rows.extend(DiffRow("removed", i, None) for i in range(i1 + paired, i2))
        rows.extend(DiffRow("added", None, j) for j in range(j1 + paired, j2))
    return rows


def word_spans(old: str, new: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Character ranges that differ in an edited line, on the old and on the new side.

    Empty when the two lines are too different for a word highlight to mean anything.
    """
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    if matcher.ratio() < _WORD_DIFF_MIN_RATIO:
        return [], []
    old_spans: list[tuple[int, int]] = []
    new_spans: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            old_spans.append((i1, i2))
        if j2 > j1:
            new_spans.append((j1, j2))
    return old_spans, new_spans


def _no_background(style: str | Style) -> Style:
    parsed = Style.parse(style) if isinstance(style, str) else style
    return Style(
        color=parsed.color,
        bold=parsed.bold,
        italic=parsed.italic,
        underline=parsed.underline,
        strike=parsed.strike,
    )


def _highlighted(lines: list[str], lexer: str, style: str) -> list[Text]:
    """Each line highlighted in the file's language (one pass, so multi-line tokens stay right)."""
    if not lines:
        return []
    syntax = Syntax("\n".join(lines), lexer, theme=style, background_color="default")
    text = syntax.highlight("\n".join(lines))
    # The theme gives the text and every token a background; without it the line colours show.
    text.style = ""
    text.spans = [Span(span.start, span.end, _no_background(span.style)) for span in text.spans]
    text.rstrip()
    parts = list(text.split("\n", allow_blank=True))[: len(lines)]
    parts.extend(Text("") for _ in range(len(lines) - len(parts)))
    return parts


def _paint(line: Text, background: str | None, words: list[tuple[int, int]], word: str) -> Text:
    painted = line.copy()
    if background:
        painted.stylize_before(Style(bgcolor=background))
    for start, end in words:
        painted.stylize(Style(bgcolor=word, bold=True), start, end)
    return painted


@dataclass(frozen=True)
class _Painted:
    row: DiffRow
    old: Text | None
    new: Text | None


def _painted_rows(
    old: list[str], new: list[str], lexer: str, style: str, colours: DiffColours
) -> Iterator[_Painted]:
    old_hl, new_hl = _highlighted(old, lexer, style), _highlighted(new, lexer, style)
    for row in diff_rows(old, new):
        old_text = old_hl[row.old] if row.old is not None else None
        new_text = new_hl[row.new] if row.new is not None else None
        old_words: list[tuple[int, int]] = []
        new_words: list[tuple[int, int]] = []
        if row.kind == "changed" and row.old is not None and row.new is not None:
            old_words, new_words = word_spans(old[row.old], new[row.new])
        if row.kind == "context":
            yield _Painted(row, old_text, new_text)
            continue
        yield _Painted(
            row,
            None
            if old_text is None
            else _paint(old_text, colours.removed, old_words, colours.removed_word),
            None
            if new_text is None
            else _paint(new_text, colours.added, new_words, colours.added_word),
        )


def _number(start: int, index: int | None) -> Text:
    return Text("" if index is None else str(start + index), style="dim")


def unified_table(
    old: list[str],
    new: list[str],
    starts: tuple[int, int],
    lexer: str,
    style: str,
    colours: DiffColours,
) -> RenderableType:
    """Removed lines, then their replacements, each row filled with its background."""
    table = Table.grid(expand=True, padding=(0, 1))
    table.add_column(justify="right", no_wrap=True)
    table.add_column(justify="right", no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column(ratio=1)
    removed: list[_Painted] = []
    added: list[_Painted] = []

    def flush() -> None:
        # A changed block reads as in every diff viewer: its removed lines, then its added ones.
        for painted in removed:
            table.add_row(
                _number(starts[0], painted.row.old),
                "",
                "-",
                painted.old,
                style=Style(bgcolor=colours.removed),
            )
        for painted in added:
            table.add_row(
                "",
                _number(starts[1], painted.row.new),
                "+",
                painted.new,
                style=Style(bgcolor=colours.added),
            )
        removed.clear()
        added.clear()

    for painted in _painted_rows(old, new, lexer, style, colours):
        row = painted.row
        if row.kind != "context":
            if painted.old is not None:
                removed.append(painted)
            if painted.new is not None:
                added.append(painted)
            continue
        flush()
        table.add_row(_number(starts[0], row.old), _number(starts[1], row.new), " ", painted.new)
    flush()
    return table


def _cell(text: Text | None, background: str | None) -> RenderableType:
    if text is None:
        return Text("")
    if background is None:
        return text
    # Padding with a style fills the whole cell, so the line's colour reaches the column edge.
    return Padding(text, (0, 0), style=Style(bgcolor=background), expand=True)


def split_table(
    old: list[str],
    new: list[str],
    starts: tuple[int, int],
    lexer: str,
    style: str,
    colours: DiffColours,
) -> RenderableType:
    """Base on the left, new on the right, edited lines side by side with their changes lit."""
    table = Table.grid(expand=True, padding=(0, 1))
    table.add_column(justify="right", no_wrap=True)
    table.add_column(ratio=1)
    table.add_column(justify="right", no_wrap=True)
    table.add_column(ratio=1)
    for painted in _painted_rows(old, new, lexer, style, colours):
        row = painted.row
        context = row.kind == "context"
        table.add_row(
            _number(starts[0], row.old),
            _cell(painted.old, None if context or painted.old is None else colours.removed),
            _number(starts[1], row.new),
            _cell(painted.new, None if context or painted.new is None else colours.added),
        )
    return table
