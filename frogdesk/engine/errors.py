"""The engine's own error for a backend the settings cannot make."""

from __future__ import annotations

from frogdesk.errors import FrogDeskError


class BackendError(FrogDeskError, ValueError):
    """The settings do not describe a usable backend; the message says what to set."""
