"""A hunk as apply will write it: the user's edit of its new side, with lines and counts redone."""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Sequence

from frogdesk.review.decisions import HunkDecisions
from frogdesk.review.model import Hunk, SessionDiff

NO_NEWLINE = b"\\ No newline at end of file"
_NEW_RANGE = re.compile(r"\+\d+(?:,\d+)?")


def _tagged(tag: bytes, lines: Sequence[bytes]) -> list[bytes]:
    """Diff lines as git prints them: the tag, the text, and git's mark after a last open line."""
    out: list[bytes] = []
    for line in lines:
        if line.endswith(b"\n"):
            out.append(tag + line[:-1])
        else:
            out += [tag + line, NO_NEWLINE]
    return out


def diff_lines(old: Sequence[bytes], new: Sequence[bytes]) -> tuple[bytes, ...]:
    """The unified diff lines of a hunk's two sides (context, removed, then added lines)."""
    out: list[bytes] = []
    matcher = difflib.SequenceMatcher(None, list(old), list(new), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out += _tagged(b" ", old[i1:i2])
            continue
        out += _tagged(b"-", old[i1:i2])
        out += _tagged(b"+", new[j1:j2])
    return tuple(out)


def with_new_side(hunk: Hunk, new_lines: Sequence[bytes]) -> Hunk:
    """The text hunk with another new side: what the review must show for an edited hunk.

    The id stays (decisions and the review record name the hunk by it); the diff lines,
    the added and removed counts and the header's new-side count follow the new lines.
    """
    lines = diff_lines(hunk.old_lines, new_lines)
    added = sum(1 for line in lines if line.startswith(b"+"))
    removed = sum(1 for line in lines if line.startswith(b"-"))
    count = len(new_lines)
    new_range = f"+{hunk.new_start}" if count == 1 else f"+{hunk.new_start},{count}"
    header = _NEW_RANGE.sub(new_range, hunk.header, count=1)
    return dataclasses.replace(
        hunk,
        new_lines=tuple(new_lines),
        new_count=count,
        added=added,
        removed=removed,
        lines=lines,
        header=header,
    )


def shown_hunks(diff: SessionDiff, decisions: HunkDecisions) -> dict[str, Hunk]:
    """Every hunk of the diff by id as an apply with these decisions writes it (edits in)."""
    edits = decisions.edited_lines(diff)
    return {
        hunk.id: with_new_side(hunk, edits[hunk.id]) if hunk.id in edits else hunk
        for _, hunk in diff.hunks()
    }
