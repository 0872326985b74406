"""What a reviewer must see of a diff: every hunk's lines, symlink targets, modes, binary sizes."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from frogdesk.inert import inert_line
from frogdesk.review.model import FileChange, Hunk, SessionDiff

USER_CHANGED_NOTE = "you changed this file while the session ran"
"""Said beside a file the user changed in the repository while the session ran."""


@dataclass(frozen=True)
class FileFacts:
    """What a file's hunks do not carry: symlink targets and blob sizes (None: no such side)."""

    old_target: str | None = None
    new_target: str | None = None
    old_size: int | None = None
    new_size: int | None = None


def hunk_text_lines(hunk: Hunk) -> list[str]:
    """A text hunk's diff lines (tag + text), decoded; bytes that are not UTF-8 are replaced."""
    return [line.decode("utf-8", "replace") for line in hunk.lines]


def _side(target: str | None, size: int | None) -> str:
    if target is not None:
        return f"symlink -> {target}"
    return f"{size} bytes" if size is not None else "absent"


def detail_lines(change: FileChange, hunk: Hunk, facts: FileFacts) -> Iterator[str]:
    """What one hunk changes, line by line, inert (escapes shown, never interpreted)."""
    if hunk.kind == "text":
        for line in hunk_text_lines(hunk):
            yield inert_line(line)
    elif hunk.kind == "mode":
        yield f"mode {change.old_mode} -> {change.new_mode}"
    elif hunk.kind == "rename":
        yield inert_line(f"rename {change.old_path} -> {change.new_path}")
    else:
        old = _side(facts.old_target, facts.old_size) if change.old_blob else "absent"
        new = _side(facts.new_target, facts.new_size) if change.new_blob else "absent"
        kind = "binary" if change.binary else "content"
        yield inert_line(f"{kind}: {old} => {new}")
        if facts.new_target is not None:
            yield inert_line(f"-> {facts.new_target}")


def hunk_json(change: FileChange, hunk: Hunk, facts: FileFacts) -> dict[str, Any]:
    """The content part of a hunk's JSON: its lines, or what the whole-file change is."""
    if hunk.kind == "text":
        return {"lines": hunk_text_lines(hunk)}
    if hunk.kind == "mode":
        return {"lines": [], "old_mode": change.old_mode, "new_mode": change.new_mode}
    return {
        "lines": [],
        "old_target": facts.old_target,
        "new_target": facts.new_target,
        "old_size": facts.old_size,
        "new_size": facts.new_size,
    }


IGNORED_NAMED = 3
"""Ignored paths the note names before it only counts the rest."""


def ignored_note(paths: Sequence[str]) -> str:
    """One line on the paths the session wrote that the user's repository ignores ("" for none)."""
    if not paths:
        return ""
    what = "path" if len(paths) == 1 else "paths"
    named = ", ".join(inert_line(p) for p in paths[:IGNORED_NAMED])
    more = f" and {len(paths) - IGNORED_NAMED} more" if len(paths) > IGNORED_NAMED else ""
    return f"{len(paths)} ignored {what} changed, not offered: {named}{more}"


LISTED_LINES = 40
"""Diff lines an apply with no review lists per hunk; `frogdesk review` shows them all."""
LISTED_WIDTH = 200
"""Characters of one listed diff line; the rest is cut with a mark."""


def applied_lines(
    diff: SessionDiff, hunk_ids: Collection[str], facts: dict[str, FileFacts]
) -> Iterator[str]:
    """The chosen hunks as an apply with no prior review lists them: by id, with their lines
    (at most LISTED_LINES each, cut to LISTED_WIDTH), so a huge file cannot flood the terminal."""
    for change in diff.files:
        chosen = [h for h in change.hunks if h.id in hunk_ids]
        if not chosen:
            continue
        yield inert_line(f"{change.status:<10} {change.path}")
        for hunk in chosen:
            yield inert_line(f"  {hunk.id}  +{hunk.added} -{hunk.removed}  {hunk.header}")
            lines = list(detail_lines(change, hunk, facts[change.path]))
            for line in lines[:LISTED_LINES]:
                cut = line if len(line) <= LISTED_WIDTH else line[:LISTED_WIDTH] + " [...]"
                yield f"      {cut}"
            if len(lines) > LISTED_LINES:
                yield f"      [... {len(lines) - LISTED_LINES} more lines]"
