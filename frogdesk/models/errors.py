"""The one error type the models package raises for problems the user can act on."""

from __future__ import annotations

from frogdesk.errors import FrogDeskError


class ModelError(FrogDeskError):
    """A model problem with a clear message and, where there is one, the way forward."""
