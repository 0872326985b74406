"""Untrusted text as Textual `Content` and Rich `Text`: literal, control characters shown, never markup."""

from __future__ import annotations

from rich.text import Text
from textual.content import Content

from frogdesk.inert import inert_line, inert_text


def plain_line(text: str) -> Content:
    """One line of outside text as Content: no markup parsed, every control character visible."""
    return Content(inert_line(text))


def plain_block(text: str) -> Content:
    """Multi-line outside text (observations, reports) as Content, newlines and tabs kept."""
    return Content(inert_text(text))


def plain_cell(text: str) -> Text:
    """A table cell or Rich renderable part: Rich `Text` is never read as markup."""
    return Text(inert_line(text))
