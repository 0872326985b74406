"""What a diff's hunks do not carry, read from the worktree's objects: symlink targets, blob sizes."""

from __future__ import annotations

from pathlib import Path

from frogdesk.review.gitcmd import git_out, read_blobs
from frogdesk.review.model import SYMLINK_MODE, SessionDiff
from frogdesk.review.show import FileFacts


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
