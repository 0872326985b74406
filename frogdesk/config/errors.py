"""The settings' one error."""

from __future__ import annotations

from frogdesk.errors import FrogDeskError


class ConfigError(FrogDeskError):
    """A setting is unknown or has the wrong type; the message names the key and its source."""
