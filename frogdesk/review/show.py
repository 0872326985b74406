"""What a reviewer must see of a diff: every hunk's lines, symlink targets, modes, binary sizes."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frogdesk.inert import inert_line
from frogdesk.review.gitcmd import git_out, read_blobs
from frogdesk.review.model import SYMLINK_MODE, FileChange, Hunk, SessionDiff


@dataclass(frozen=True)
class FileFacts:
    """What a file's hunks do not carry: symlink targets and blob sizes (None: no such side)."""

    old_target: str | None = None
    new_target: str | None = None
    old_size: int | None = None
    new_size: int | None = None


def file_facts(worktree: Path, diff: SessionDiff) -> dict[str, FileFacts]:
    """Targets of the symlinks and sizes of the binary (or whole-file) changes, by path."""
    links = [c for c in diff.files if SYMLINK_MODE in (c.old_mode, c.new_mode)]
    link_shas = [s for c in links for s in (c.old_blob, c.new_blob) if s is not None]
    targets = {
        sha: data.decode("utf-8", "surrogateescape")
        for sha, data in read_blobs(worktree, link_shas).items()
    }
    sized = [c for c in diff.files if c.binary or any(h.kind == "content" for h in c.hunks)]
    size_shas = list(dict.fromkeys(s for c in sized for s in (c.old_blob, c.new_blob) if s))
    sizes: dict[str, int] = {}
    if size_shas:
        out = git_out(
            worktree,
            ["cat-file", "--batch-check"],
            stdin="".join(f"{s}\n" for s in size_shas).encode(),
        )
        for line in out.decode().splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[2].isdigit():
                sizes[parts[0]] = int(parts[2])
    facts: dict[str, FileFacts] = {}
    for change in diff.files:
        old_link = change.old_mode == SYMLINK_MODE and change.old_blob is not None
        new_link = change.new_mode == SYMLINK_MODE and change.new_blob is not None
        facts[change.path] = FileFacts(
            targets.get(str(change.old_blob)) if old_link else None,
            targets.get(str(change.new_blob)) if new_link else None,
            sizes.get(str(change.old_blob)) if not old_link and change.old_blob else None,
            sizes.get(str(change.new_blob)) if not new_link and change.new_blob else None,
        )
    return facts


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


def applied_lines(worktree: Path, diff: SessionDiff, hunk_ids: Collection[str]) -> Iterator[str]:
    """The chosen hunks as an apply with no prior review lists them: by id, with their lines
    (at most LISTED_LINES each, cut to LISTED_WIDTH), so a huge file cannot flood the terminal."""
    facts = file_facts(worktree, diff)
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
