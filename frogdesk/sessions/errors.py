"""The sessions package's own errors."""

from __future__ import annotations

from frogdesk.errors import FrogDeskError


class SessionNotFoundError(FrogDeskError, LookupError):
    """No session with that id (or unique id prefix)."""
