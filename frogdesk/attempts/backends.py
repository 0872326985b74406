"""The backends of N attempts: each attempt builds its own from its session record."""

from __future__ import annotations

from frogdesk.engine.types import Backend
from frogdesk.sessions.parts import BackendFactory, default_backend


def attempt_backends(loaded: Backend | None = None) -> BackendFactory:
    """The backend factory for attempts that run at the same time.

    A backend already loaded in this process (`loaded`, the TUI's model) is not shared
    between concurrent attempts: a backend serves one conversation at a time. Script and
    openai attempts each get their own backend (N concurrent requests on openai).
    """
    del loaded  # never shared between concurrent attempts, see above
    return default_backend
