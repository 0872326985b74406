"""What a file becomes when some of its hunks are approved: the target state of each path."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from frogdesk.review.model import FileChange, apply_text_hunks


@dataclass(frozen=True)
class FileState:
    """A file's exact bytes and git mode (100644, 100755 or 120000 for a symlink's target)."""

    content: bytes
    mode: str


@dataclass(frozen=True)
class StateRef:
    """A file state by content hash and mode."""

    sha256: str
    mode: str

    @classmethod
    def of(cls, state: FileState) -> StateRef:
        """The reference of a state."""
        return cls(hashlib.sha256(state.content).hexdigest(), state.mode)


def ref_of(state: FileState | None) -> StateRef | None:
    """The reference of a state, or None for an absent file."""
    return StateRef.of(state) if state is not None else None


@dataclass(frozen=True)
class FilePlan:
    """One file's move from its base state to its approved state: src (base path) -> dst."""

    src: str
    dst: str
    base: FileState | None
    target: FileState | None
    """None when the approved change deletes the file."""


def plan_file(
    change: FileChange,
    approved: Collection[str],
    edits: Mapping[str, Sequence[bytes]],
    base_content: bytes | None,
    new_content: bytes | None,
) -> FilePlan | None:
    """The file's approved state, or None when none of its hunks is approved."""
    chosen = [h for h in change.hunks if h.id in approved]
    if not chosen:
        return None
    kinds = {h.kind for h in chosen}
    base = (
        FileState(base_content or b"", str(change.old_mode))
        if change.old_path is not None
        else None
    )
    src = change.old_path if change.old_path is not None else str(change.new_path)
    dst = change.new_path if "rename" in kinds or change.old_path is None else src
    assert dst is not None or change.status == "deleted"
    if "content" in kinds:
        if change.new_path is None:
            return FilePlan(src, src, base, None)
        return FilePlan(src, str(dst), base, FileState(new_content or b"", str(change.new_mode)))
    text = [h for h in chosen if h.kind == "text"]
    content = apply_text_hunks(base_content or b"", text, edits) if text else (base_content or b"")
    if change.new_path is None:  # a deleted text file: its one hunk removes every line
        return FilePlan(src, src, base, None)
    if base is None:
        mode = str(change.new_mode)
    else:
        mode = str(change.new_mode) if "mode" in kinds else base.mode
    return FilePlan(src, str(dst), base, FileState(content, mode))
