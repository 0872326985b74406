"""The review package's own errors."""

from __future__ import annotations

from frogdesk.errors import FrogDeskError


class UnsafePath(FrogDeskError):
    """A path that apply and undo must never write: outside the repo, in `.git`, or via a symlink."""


class UnknownHunk(FrogDeskError, KeyError):
    """An approved id names no hunk of the diff (the worktree changed since it was listed)."""


class TransactionBusy(FrogDeskError):
    """Another FrogDesk process is applying or undoing in this session right now."""


class HunkMismatch(FrogDeskError):
    """A hunk's base-side lines are not where the hunk says they are."""


class Unrecoverable(FrogDeskError):
    """A journal cannot be finished nor reverted: a needed content is gone."""
