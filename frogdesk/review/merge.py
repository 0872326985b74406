"""Three-way merge of one file's states with `git merge-file`: base, the user's, the approved."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from frogdesk.review.gitcmd import run_git
from frogdesk.review.model import SYMLINK_MODE
from frogdesk.review.target import FileState
from frogdesk.scratch import scratch_folder


@dataclass(frozen=True)
class MergeOutcome:
    """The merged state (None: absent), or a reason why the merge conflicts."""

    state: FileState | None
    conflict: str = ""


def looks_binary(data: bytes) -> bool:
    """Git's own rule: a NUL byte in the first 8,000 bytes makes a file binary."""
    return b"\0" in data[:8000]


def merge_text(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """The clean 3-way merge of text contents, or None if both sides change the same region."""
    if ours in (base, theirs):
        return theirs
    if theirs == base:
        return ours
    with scratch_folder("frogdesk-merge-") as tmp:
        names = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            (Path(tmp) / name).write_bytes(data)
            names.append(name)
        proc = run_git(Path(tmp), ["merge-file", "-p", "-q", *names], ok_codes=range(0, 128))
    return proc.stdout if proc.returncode == 0 else None


def merge_states(
    base: FileState | None, ours: FileState | None, theirs: FileState | None
) -> MergeOutcome:
    """Merge the user's current state (ours) with the approved one (theirs) over the base."""
    if ours in (base, theirs):
        return MergeOutcome(theirs)
    if theirs == base:
        return MergeOutcome(ours)
    if base is None:
        return MergeOutcome(None, "the file already exists in your tree with other content")
    if ours is None:
        return MergeOutcome(None, "you deleted this file since the session began")
    if theirs is None:
        return MergeOutcome(
            None, "you changed this file since the session began; the session deletes it"
        )
    if SYMLINK_MODE in (base.mode, ours.mode, theirs.mode):
        return MergeOutcome(None, "both you and the session changed this symlink")
    if base.mode == ours.mode or ours.mode == theirs.mode:
        mode = theirs.mode
    elif base.mode == theirs.mode:
        mode = ours.mode
    else:
        return MergeOutcome(None, "both you and the session changed this file's mode")
    trivial = ours.content in (base.content, theirs.content) or theirs.content == base.content
    if not trivial and any(looks_binary(s.content) for s in (base, ours, theirs)):
        return MergeOutcome(None, "both you and the session changed this binary file")
    merged = merge_text(base.content, ours.content, theirs.content)
    if merged is None:
        return MergeOutcome(None, "you changed the same lines since the session began")
    return MergeOutcome(FileState(merged, mode))
