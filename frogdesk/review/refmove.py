"""Moving HEAD's branch and the index entries of some paths, as a step a journal can redo or undo.

An apply with --commit moves the branch from HEAD to its new commit; undo moves it back to
the commit's parent. Either move is two git writes (the ref, then the index entries), so a
crash can land between them; the move is written into the transaction's journal first, and
`advance` brings the repository from any of the states on the way to the end state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from frogdesk.review.gitcmd import git_out, run_git

IndexEntries = dict[str, list[str]]
"""Index entries per path: `MODE SHA STAGE` strings as `git ls-files -s` prints them ([]: absent)."""

MoveKind = Literal["commit", "uncommit"]

_NO_SHA = "0" * 40


@dataclass
class RefMove:
    """HEAD's ref going from `old` to `new` ("" is an unborn branch), with the index of `paths`."""

    kind: MoveKind
    ref: str
    """`refs/heads/NAME`, or `HEAD` when it is detached."""
    old: str
    new: str
    index_old: IndexEntries = field(default_factory=dict)
    """The entries of the paths while the ref is at `old` (their keys are the paths)."""
    index_new: IndexEntries = field(default_factory=dict)
    """The entries of the paths once the ref is at `new`."""

    def reversed(self) -> RefMove:
        """The move that takes this one back."""
        kind: MoveKind = "uncommit" if self.kind == "commit" else "commit"
        return RefMove(kind, self.ref, self.new, self.old, self.index_new, self.index_old)


@dataclass(frozen=True)
class HistoryOutcome:
    """Whether a ref move happened (or had happened already), and a line for the user."""

    done: bool
    message: str


def index_entries(repo_root: Path, paths: Sequence[str]) -> IndexEntries:
    """The index entries of `paths` right now."""
    out: IndexEntries = {p: [] for p in paths}
    if not paths:
        return out
    raw = git_out(repo_root, ["ls-files", "-s", "-z", "--", *_literal(paths)])
    for meta, path in _records(raw):
        if path in out:
            out[path].append(meta)
    return out


def tree_entries(repo_root: Path, commit: str, paths: Sequence[str]) -> IndexEntries:
    """The entries `paths` have in `commit`'s tree, as stage-0 index entries."""
    out: IndexEntries = {p: [] for p in paths}
    if not paths or not commit:
        return out
    raw = git_out(repo_root, ["ls-tree", "-z", "--full-tree", commit, "--", *_literal(paths)])
    for meta, path in _records(raw):
        mode, _kind, sha = meta.split()
        if path in out:
            out[path].append(f"{mode} {sha} 0")
    return out


def head_ref(repo_root: Path) -> str:
    """The ref HEAD names (`refs/heads/NAME`), or `HEAD` when it is detached."""
    symbolic = run_git(repo_root, ["symbolic-ref", "-q", "HEAD"], ok_codes=(0, 1))
    return symbolic.stdout.decode().strip() or "HEAD"


def ref_value(repo_root: Path, ref: str) -> str:
    """The commit a ref points to, "" when it does not exist (an unborn branch)."""
    proc = run_git(repo_root, ["rev-parse", "--verify", "-q", f"{ref}^{{commit}}"], ok_codes=(0, 1))
    return proc.stdout.decode().strip()


def advance(repo_root: Path, move: RefMove) -> HistoryOutcome:
    """Bring the ref to `move.new` and the paths' index entries to `move.index_new`.

    Safe to repeat after a crash at any point: a ref already at `new` is left there, and
    index entries are rewritten only while they still are `index_old`. A ref found
    elsewhere (the user committed, reset or switched branch meanwhile) is not touched.
    """
    # HEAD on another branch, or this one moved: the user's history, not ours to change.
    on = head_ref(repo_root)
    now = ref_value(repo_root, "HEAD")
    if on != move.ref or now not in (move.old, move.new):
        return HistoryOutcome(_landed(repo_root, move, now), _moved_on(move, now))
    if now == move.old and move.old != move.new and not _update_ref(repo_root, move):
        return HistoryOutcome(False, _moved_on(move, ref_value(repo_root, move.ref)))
    entries = index_entries(repo_root, list(move.index_new))
    if entries == move.index_old and entries != move.index_new:
        _write_index(repo_root, move.index_new)
    elif entries != move.index_new:
        return HistoryOutcome(True, f"{_done(move)}; the index of its files changed meanwhile")
    return HistoryOutcome(True, _done(move))


def _landed(repo_root: Path, move: RefMove, now: str) -> bool:
    """A commit that HEAD has since built on still counts as made (undo then says it stays)."""
    if move.kind != "commit" or not now or not move.new:
        return False
    proc = run_git(repo_root, ["merge-base", "--is-ancestor", move.new, now], ok_codes=(0, 1))
    return proc.returncode == 0


def _update_ref(repo_root: Path, move: RefMove) -> bool:
    """Move the ref from `old` to `new`, guarded by its old value; False when it had moved."""
    guard = ["-m", f"frogdesk {'apply' if move.kind == 'commit' else 'undo'}"]
    if move.new:
        args = ["update-ref", *guard, move.ref, move.new, move.old or _NO_SHA]
    else:
        args = ["update-ref", *guard, "-d", move.ref, move.old]
    return run_git(repo_root, args, ok_codes=(0, 1, 128)).returncode == 0


def _write_index(repo_root: Path, entries: Mapping[str, list[str]]) -> None:
    """Replace the index entries of these paths (all stages) with the given ones."""
    lines = [f"0 {_NO_SHA}\t{p}" for p in entries]  # drops every stage of the path first
    for path, items in entries.items():
        lines += [f"{item}\t{path}" for item in items]
    stdin = "".join(line + "\0" for line in lines).encode("utf-8", "surrogateescape")
    git_out(repo_root, ["update-index", "-z", "--index-info"], stdin=stdin)


def _done(move: RefMove) -> str:
    name = move.ref.removeprefix("refs/heads/")
    if move.kind == "commit":
        return f"committed as {move.new[:12]}"
    target = move.new[:12] if move.new else "no commit (unborn)"
    return f"removed commit {move.old[:12]}: {name} is back at {target}"


def _moved_on(move: RefMove, now: str) -> str:
    name = move.ref.removeprefix("refs/heads/")
    if move.kind == "commit":
        return (
            f"not committed: {name} moved to {now[:12] or 'nothing'} meanwhile; "
            "the files are applied, uncommitted"
        )
    return f"commit {move.old[:12]} stays: HEAD moved on to {now[:12] or 'nothing'} since the apply"


def _literal(paths: Sequence[str]) -> list[str]:
    # Names the sandbox chose: `*` or `:(glob)...` read as pathspecs would reach other files.
    return [f":(literal){p}" for p in paths]


def _records(raw: bytes) -> list[tuple[str, str]]:
    """`META<TAB>PATH` records of a `-z` listing."""
    out: list[tuple[str, str]] = []
    for item in raw.split(b"\0"):
        if item:
            meta, _, name = item.partition(b"\t")
            out.append((meta.decode(), name.decode("utf-8", "surrogateescape")))
    return out
