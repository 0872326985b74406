"""Small highlighted diffs for Edit and Write tool cards."""

from __future__ import annotations

import difflib
from typing import Any

from rich.syntax import Syntax

from frogdesk.inert import inert_text


def edit_diff(arguments: dict[str, Any], context: int = 2) -> str:
    """A unified diff of an Edit call's old_string -> new_string, or of a Write's content."""
    path = str(arguments.get("file_path") or arguments.get("path") or "file")
    if "content" in arguments:
        old_lines: list[str] = []
        new_lines = str(arguments.get("content", "")).splitlines()
    else:
        old_lines = str(arguments.get("old_string", "")).splitlines()
        new_lines = str(arguments.get("new_string", "")).splitlines()
    lines = difflib.unified_diff(
        old_lines, new_lines, f"a/{path}", f"b/{path}", n=context, lineterm=""
    )
    return "\n".join(lines)


def diff_syntax(diff_text: str, style: str, max_lines: int = 40) -> Syntax:
    """The diff highlighted by pygments in the given style, cut to `max_lines`."""
    lines = inert_text(diff_text).split("\n")
    if len(lines) > max_lines:
        lines = [*lines[:max_lines], f"... {len(lines) - max_lines} more lines"]
    return Syntax("\n".join(lines), "diff", theme=style, background_color="default", word_wrap=True)
