"""Computing a session's diff with git: the worktree (untracked files included) against its base."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from frogdesk.review.gitcmd import git_out
from frogdesk.review.model import (
    SYMLINK_MODE,
    FileChange,
    FileStatus,
    Hunk,
    HunkKind,
    SessionDiff,
    hunk_id,
)
from frogdesk.review.snapshot import review_paths, snapshot_tree, snapshot_with_ignored
from frogdesk.scratch import scratch_folder
from frogdesk.worktree.git import GitPaths

__all__ = ["compute_diff", "patch_text", "review_paths", "snapshot_tree", "trusted_attributes"]

GITLINK_MODE = "160000"
_HUNK_HEADER = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")


@dataclass(frozen=True)
class _RawEntry:
    old_mode: str
    new_mode: str
    old_blob: str
    new_blob: str
    status: str
    old_path: str
    new_path: str


@contextlib.contextmanager
def trusted_attributes(
    worktree: Path, base_commit: str
) -> Iterator[tuple[GitPaths, dict[str, str]]]:
    """Where to run a diff so that git reads attributes from the base commit alone.

    A `.gitattributes` the sandbox wrote (`app.py -diff`, itself hidden by a `.gitignore`)
    would show an added line as "binary" and let it be approved unseen. The diff runs over
    an empty folder as its work tree and an index read from the base commit, and git falls
    back to that index for every `.gitattributes`: the user's committed ones still count.
    """
    common = review_paths(worktree).common_dir
    with scratch_folder("frogdesk-attributes-") as tmp:
        empty = Path(tmp) / "work"
        empty.mkdir()
        paths = GitPaths(work_tree=empty, git_dir=common, common_dir=common)
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git_out(paths, ["read-tree", base_commit], env=env)
        yield paths, env


def compute_diff(worktree: Path, base_commit: str, context: int = 3) -> SessionDiff:
    """The diff of the worktree against base_commit, parsed into files and hunks."""
    tree, ignored = snapshot_with_ignored(worktree, base_commit)
    with trusted_attributes(worktree, base_commit) as (paths, env):
        out = git_out(
            paths,
            [
                "diff-tree", "-r", "-z", "-M", "--raw", "-p", "--full-index", "--no-textconv",
                "--no-ext-diff", f"-U{context}", base_commit, tree,
            ],
            env=env,
        )  # fmt: skip
    entries, patch = _split_raw(out)
    sections = _split_sections(patch)
    files: list[FileChange] = []
    cursor = 0
    for entry in entries:
        count = 2 if entry.status == "T" else 1
        mine = sections[cursor : cursor + count]
        cursor += count
        if GITLINK_MODE in (entry.old_mode, entry.new_mode):
            continue  # submodules are not reviewed file by file
        files.append(_file_change(entry, mine))
    return SessionDiff(base_commit, tree, tuple(files), ignored=tuple(ignored))


def patch_text(worktree: Path, base_commit: str) -> tuple[str, list[str]]:
    """The worktree's change as one patch `git apply` takes (binary included), and its paths.

    Computed from the same snapshot as `compute_diff`, so the patch and the review agree.
    """
    tree = snapshot_tree(worktree, base_commit)
    options = ["--no-color", "--no-ext-diff", "--no-textconv"]
    with trusted_attributes(worktree, base_commit) as (paths, env):
        patch = git_out(paths, ["diff", "--binary", *options, base_commit, tree], env=env)
        names = git_out(paths, ["diff", "--name-only", "-z", *options, base_commit, tree], env=env)
    found = [n.decode("utf-8", "surrogateescape") for n in names.split(b"\0") if n]
    return patch.decode("utf-8", "replace"), found


def _split_raw(out: bytes) -> tuple[list[_RawEntry], bytes]:
    """The raw entries and the patch text that follows them in `-z --raw -p` output."""
    tokens = out.split(b"\0")
    entries: list[_RawEntry] = []
    i = 0
    while i < len(tokens) and tokens[i].startswith(b":"):
        old_mode, new_mode, old_blob, new_blob, status = tokens[i][1:].decode().split(" ")
        paths = [tokens[i + 1].decode("utf-8", "surrogateescape")]
        i += 2
        if status[0] in "RC":
            paths.append(tokens[i].decode("utf-8", "surrogateescape"))
            i += 1
        else:
            paths.append(paths[0])
        entries.append(_RawEntry(old_mode, new_mode, old_blob, new_blob, status[0], *paths))
    patch = b"\0".join(tokens[i:]).lstrip(b"\0")
    return entries, patch


def _split_sections(patch: bytes) -> list[list[bytes]]:
    """The patch cut into per-file sections of lines, each starting at `diff --git`."""
    sections: list[list[bytes]] = []
    lines = patch.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for line in lines:
        if line.startswith(b"diff --git ") or not sections:
            sections.append([])
        sections[-1].append(line)
    return sections


def _parse_text_hunks(path: str, section: list[bytes]) -> tuple[list[Hunk], bool]:
    """The text hunks of one section, and whether git called the file binary."""
    hunks: list[Hunk] = []
    binary = False
    current: dict[str, object] | None = None
    old: list[bytes] = []
    new: list[bytes] = []
    shown: list[bytes] = []
    last = b" "
    counts = [0, 0]
    seen: dict[str, int] = {}

    def close() -> None:
        if current is None:
            return
        parts = [b"".join(old), b"\0", b"".join(new)]
        key = hunk_id(path, "text", parts, 0)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        hunks.append(
            Hunk(
                id=hunk_id(path, "text", parts, occurrence) if occurrence else key,
                kind="text",
                old_lines=tuple(old),
                new_lines=tuple(new),
                added=counts[0],
                removed=counts[1],
                lines=tuple(shown),
                **current,  # type: ignore[arg-type]
            )
        )

    for line in section:
        match = _HUNK_HEADER.match(line)
        if match:
            close()
            old, new, shown, counts = [], [], [], [0, 0]
            current = {
                "header": line.decode("utf-8", "replace"),
                "old_start": int(match[1]),
                "old_count": int(match[2]) if match[2] is not None else 1,
                "new_start": int(match[3]),
                "new_count": int(match[4]) if match[4] is not None else 1,
            }
            continue
        if current is None:
            if line.startswith(b"Binary files ") and line.endswith(b" differ"):
                binary = True
            continue
        tag, body = line[:1], line[1:] + b"\n"
        shown.append(line)
        if tag == b" ":
            old.append(body)
            new.append(body)
        elif tag == b"-":
            old.append(body)
            counts[1] += 1
        elif tag == b"+":
            new.append(body)
            counts[0] += 1
        elif tag == b"\\":
            # "\ No newline at end of file" belongs to the line just before it.
            if last in (b" ", b"-"):
                old[-1] = old[-1][:-1]
            if last in (b" ", b"+"):
                new[-1] = new[-1][:-1]
            continue
        last = tag
    close()
    return hunks, binary


def _file_hunk(path: str, kind: HunkKind, header: str, entry: _RawEntry) -> Hunk:
    parts = [
        header.encode("utf-8", "surrogateescape"),
        entry.old_blob.encode(),
        entry.new_blob.encode(),
    ]
    return Hunk(id=hunk_id(path, kind, parts, 0), kind=kind, header=header)


def _file_change(entry: _RawEntry, sections: list[list[bytes]]) -> FileChange:
    status = entry.status
    path = entry.new_path if status != "D" else entry.old_path
    section = sections[0] if sections else []
    text_hunks, binary = _parse_text_hunks(path, section) if status != "T" else ([], False)
    symlink = SYMLINK_MODE in (entry.old_mode, entry.new_mode)
    hunks: list[Hunk] = []
    if status == "R":
        hunks.append(
            _file_hunk(path, "rename", f"rename {entry.old_path} -> {entry.new_path}", entry)
        )
    if status in ("M", "R") and entry.old_mode != entry.new_mode and not symlink:
        hunks.append(_file_hunk(path, "mode", f"mode {entry.old_mode} -> {entry.new_mode}", entry))
    whole = _whole_file_header(status, binary, symlink, bool(text_hunks))
    if whole:
        hunks.append(_file_hunk(path, "content", whole, entry))
    else:
        hunks.extend(text_hunks)
    return FileChange(
        status=_status_name(status, binary, bool(text_hunks)),
        old_path=None if status == "A" else entry.old_path,
        new_path=None if status == "D" else entry.new_path,
        old_mode=None if status == "A" else entry.old_mode,
        new_mode=None if status == "D" else entry.new_mode,
        old_blob=None if status == "A" else entry.old_blob,
        new_blob=None if status == "D" else entry.new_blob,
        binary=binary,
        hunks=tuple(hunks),
    )


def _whole_file_header(status: str, binary: bool, symlink: bool, has_text: bool) -> str:
    """The header of a whole-file hunk, or "" when the file's change is made of text hunks."""
    if status == "T":
        return "type change"
    what = (
        "symlink" if symlink else "binary file" if binary else "empty file" if not has_text else ""
    )
    if not what:
        return ""
    if status == "A":
        return f"new {what}"
    if status == "D":
        return f"deleted {what}"
    if symlink or binary:
        return f"{what} changed"
    return ""


def _status_name(status: str, binary: bool, has_text: bool) -> FileStatus:
    if status == "A":
        return "added"
    if status == "D":
        return "deleted"
    if status == "R":
        return "renamed"
    if status == "T":
        return "typechange"
    if binary:
        return "binary"
    return "modified" if has_text else "mode"
