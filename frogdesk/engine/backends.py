"""Choosing and building the engine backend that the settings ask for."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from frogdesk.config import Settings
from frogdesk.engine.chat import Backend
from frogdesk.engine.errors import BackendError
from frogdesk.engine.llama.load.plan import (
    FALLBACK_CONTEXT,
    plan_llama,
    say_load_notices,
    settings_options,
)
from frogdesk.engine.registry import BackendRequest, make

__all__ = [
    "FALLBACK_CONTEXT",
    "BackendError",
    "make_backend",
    "plan_llama",
    "say_load_notices",
    "settings_options",
]


def make_backend(
    settings: Settings,
    *,
    model_path: Path | None = None,
    script: Path | None = None,
    endpoint: str | None = None,
    progress: Callable[[float], None] | None = None,
) -> Backend:
    """The backend named by `settings.backend`, made as the registry says for its kind.

    `progress` hears llama.cpp's load fraction (0 to 1) while a llama model loads.

    Raises `BackendError` when something it needs is missing (a model problem found by
    frogdesk.models included); a file llama.cpp cannot load raises the llama backend's
    own `ModelLoadError` (or `TemplateError` for an unusable chat template).
    """
    request = BackendRequest(
        settings, model_path=model_path, script=script, endpoint=endpoint, progress=progress
    )
    return make(request, settings.engine.backend)
