"""The attempts package's own errors."""

from __future__ import annotations

from frogdesk.errors import FrogDeskError


class AttemptsError(FrogDeskError, ValueError):
    """The attempts cannot start as asked; the message says what to change."""
