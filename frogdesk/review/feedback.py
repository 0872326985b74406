"""Sending a reviewed session back to work: revert declined hunks, tell the model what was declined."""

from __future__ import annotations

from pathlib import Path

from frogdesk.review.decisions import HunkDecisions
from frogdesk.review.decisions_store import save_decisions
from frogdesk.review.fsops import read_state, tidy_scratch, write_states
from frogdesk.review.gitcmd import read_blobs
from frogdesk.review.model import SessionDiff
from frogdesk.review.target import FileState, plan_file


def reset_to_reviewed(worktree: Path, diff: SessionDiff, decisions: HunkDecisions) -> list[str]:
    """Revert rejected hunks in the worktree and write edited hunks; return the paths changed.

    Pending hunks stay: only what the user declined leaves the worktree. Before a file is
    written, the decisions (in their session folder) note what is being declined or edited,
    so the feedback still names it if a crash stops the send-back before the model is told.
    """
    rejected = decisions.ids(diff, "rejected")
    edits = decisions.edited_lines(diff)
    touched = [c for c in diff.files if any(h.id in rejected or h.id in edits for h in c.hunks)]
    shas = [s for c in touched for s in (c.old_blob, c.new_blob) if s is not None]
    blobs = read_blobs(worktree, shas)
    writes: dict[str, FileState | None] = {}
    for change in touched:
        base = blobs.get(change.old_blob) if change.old_blob else None
        new = blobs.get(change.new_blob) if change.new_blob else None
        kept = {h.id for h in change.hunks if h.id not in rejected}
        plan = plan_file(change, kept, edits, base, new)
        if plan is None:  # everything declined: the file goes back to its base state
            if change.new_path is not None:
                writes[change.new_path] = None
            if change.old_path is not None:
                writes[change.old_path] = FileState(base or b"", str(change.old_mode))
            continue
        if change.new_path is not None and change.new_path != plan.dst:
            writes[change.new_path] = None
        if plan.src != plan.dst:
            writes[plan.src] = None
        writes[plan.dst] = plan.target
    root = worktree.resolve()
    current = {path: read_state(root, path) for path in writes}
    changed = {p: s for p, s in writes.items() if s != current[p]}
    if changed:
        decisions.note_sent(diff)
        if decisions.home is not None:
            save_decisions(decisions.home, decisions)
        write_states(root, changed, current, scratch_dir(root))
    else:
        tidy_scratch(scratch_dir(root))  # what a send-back killed after its writes left
    return sorted(changed)


def scratch_dir(worktree: Path) -> Path:
    """Where temporary files for the worktree go: beside it in FrogDesk's worktrees folder (the
    same file system), never inside it, where one a crash left would show up in the review."""
    return worktree.with_name(f".{worktree.name}.frogdesk-scratch")


def feedback_message(diff: SessionDiff, decisions: HunkDecisions) -> str:
    """The user message that tells the model which changes were declined or edited, and why."""
    # First the hunks a send-back noted: one a crash cut short may have written them already.
    labels = dict(decisions.sent)
    labels.update((hunk.id, f"{change.path}: {hunk.header}") for change, hunk in diff.hunks())
    declined: list[str] = []
    edited: list[str] = []
    for hunk_id, label in labels.items():
        if decisions.decision(hunk_id) == "rejected":
            declined.append(f"- {label}")
        elif hunk_id in decisions.edits:
            edited.append(f"- {label}")
    parts: list[str] = []
    if declined:
        parts.append(
            "I reviewed your changes and declined these; they have been reverted in the worktree:\n"
            + "\n".join(declined)
        )
    if edited:
        parts.append("I edited these changes myself; keep my version:\n" + "\n".join(edited))
    if not parts:
        parts.append("I reviewed your changes and declined none of them.")
    if decisions.comment.strip():
        parts.append(f"My comment: {decisions.comment.strip()}")
    return "\n\n".join(parts)
