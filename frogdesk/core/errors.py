"""The errors the core's own operations raise, each a FrogDeskError."""

from __future__ import annotations

from frogdesk.errors import FrogDeskError
from frogdesk.sessions.errors import ApplyRefusedError


class WorktreeGoneError(FrogDeskError, ValueError):
    """The session's worktree no longer exists (discarded or removed): nothing to review."""


class StaleReviewError(ApplyRefusedError):
    """The diff to apply is not the one the user reviewed; nothing was written."""
