"""`--backend` and `--endpoint`, read the same way by `frogdesk` (the TUI) and `frogdesk run`."""

from __future__ import annotations

from frogdesk.commands.errors import UserError
from frogdesk.engine.kinds import KIND_NAMES, OPENAI, kind_of

BACKENDS = KIND_NAMES
"""The names `--backend` accepts."""


def chosen_backend(backend: str | None, endpoint: str | None) -> str | None:
    """`--backend` as given, an endpoint implying openai; an endpoint with another is refused."""
    if endpoint is None:
        return backend
    if backend is None:
        return OPENAI.name
    if not kind_of(backend).remote_endpoint:
        raise UserError(
            f"--endpoint URL is for the {OPENAI.name} backend, not --backend {backend} "
            "(drop --backend, or give --model for a local model)"
        )
    return backend


def check_endpoint(backend: str, endpoint: str | None) -> None:
    """A backend that talks to a server needs its URL, from the flag or the settings."""
    if kind_of(backend).remote_endpoint and not endpoint:
        raise UserError(
            f"the {backend} backend needs --endpoint URL (or openai_endpoint in the settings)"
        )


def known_backend(name: str) -> str:
    """The backend name, refused in one line when no kind has it (a setting's typo)."""
    if name not in BACKENDS:
        raise UserError(f"unknown backend {name!r}: choose one of {', '.join(BACKENDS)}")
    return name
