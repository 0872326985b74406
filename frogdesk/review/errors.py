"""The review package's own errors."""

from __future__ import annotations

from frogdesk.errors import FrogDeskError


class UnsafePath(FrogDeskError):
    """A path that apply and undo must never write: outside the repo, in `.git`, or via a symlink."""
