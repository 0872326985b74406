"""Text the model may copy that a tool result shows with numbered lines."""

from __future__ import annotations

import re

_NUMBERED = re.compile(r"(\d+)\. (.*)")
MIN_LINES = 3
"""Fewer numbered lines than this are not taken for a listing."""


def unnumbered(text: str) -> str | None:
    """The lines of a numbered listing (`12. text`, numbers counting up by one) without
    their numbers, joined as the file holds them; None when `text` holds no such listing.

    A file read this way is written back by the model without the numbers (an Edit's
    `old_string`, a Write), so the plain lines predict what it copies.
    """
    lines: list[str] = []
    expected = -1
    for line in text.split("\n"):
        match = _NUMBERED.fullmatch(line)
        if match is None or (expected >= 0 and int(match.group(1)) != expected):
            if len(lines) >= MIN_LINES:
                break
            lines, expected = [], -1
            if match is None:
                continue
        lines.append(match.group(2))
        expected = int(match.group(1)) + 1
    return "\n".join(lines) if len(lines) >= MIN_LINES else None
