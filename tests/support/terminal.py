"""What a Textual app would write to the terminal for its whole screen, less its own codes."""

from __future__ import annotations

import re

from textual.app import App

# A full redraw is Textual's colour (SGR) and cursor-position sequences around the cells'
# text; every other escape or control in it came from the text shown.
_OWN_CODES = re.compile(r"\x1b\[[0-9;]*[mH]")
FOREIGN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
"""Control and invisible characters that no text on screen should carry to the terminal."""


def screen_output(app: App[object]) -> str:
    """The characters a full redraw of the current screen sends, Textual's own codes removed."""
    update = app.screen._compositor.render_update(full=True)
    assert update is not None
    return _OWN_CODES.sub("", update.render_segments(app.console))


def foreign_controls(app: App[object]) -> list[str]:
    """The control and invisible characters the current screen would send the terminal."""
    return FOREIGN.findall(screen_output(app))
