"""The errors of the OpenAI-compatible backend, each a FrogDeskError."""

from __future__ import annotations

from frogdesk.errors import FrogDeskError


class EndpointError(FrogDeskError, ValueError):
    """The endpoint URL cannot be used."""


class StreamError(FrogDeskError):
    """The server sent something that is not an OpenAI chat-completion stream."""
