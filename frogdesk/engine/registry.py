"""How each backend kind is made, and what only a loaded backend of a kind can do.

The kinds and their abilities are the value table in `engine.kinds`; this is the only
module that tells `llama`, `openai` and `script` apart by name or class.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from frogdesk.config import Settings
from frogdesk.engine.chat import Backend
from frogdesk.engine.errors import BackendError, ScriptError
from frogdesk.engine.kinds import LLAMA, OPENAI, SCRIPT, kind_of
from frogdesk.engine.llama.load.plan import plan_llama, say_load_notices
from frogdesk.engine.openai.backend import OpenAIBackend
from frogdesk.engine.openai.errors import EndpointError
from frogdesk.engine.script_backend import ScriptBackend
from frogdesk.models.errors import ModelError

if TYPE_CHECKING:
    from frogdesk.engine.llama.backend import LlamaBackend
    from frogdesk.engine.llama.conversation.replying import ConversationBackend
    from frogdesk.engine.llama.load.model import LlamaModel


@dataclass(frozen=True)
class BackendRequest:
    """What a kind's maker may use: the settings and the parts the caller resolved."""

    settings: Settings
    model_path: Path | None = None
    """The GGUF file (local-model kinds)."""
    script: Path | None = None
    """The JSONL file of recorded replies (script kinds)."""
    endpoint: str | None = None
    """The endpoint URL (endpoint kinds); None takes the settings' `openai_endpoint`."""
    progress: Callable[[float], None] | None = None
    """Hears the load fraction (0 to 1) while a local model loads."""


Maker = Callable[[BackendRequest], Backend]
"""Builds a ready backend of one kind; raises BackendError when a part it needs is missing."""


def _make_script(request: BackendRequest) -> Backend:
    if request.script is None:
        raise BackendError("the script backend needs a JSONL file of replies (--script FILE)")
    try:
        return ScriptBackend(request.script)
    except ScriptError as exc:
        raise BackendError(str(exc)) from None


def _make_openai(request: BackendRequest) -> Backend:
    url = request.endpoint or request.settings.engine.openai_endpoint
    if not url:
        raise BackendError(
            "the openai backend needs an endpoint: set openai_endpoint, "
            "e.g. http://localhost:8000/v1"
        )
    try:
        return OpenAIBackend(url, model=request.settings.engine.openai_model)
    except EndpointError as exc:
        raise BackendError(str(exc)) from None


def _make_llama(request: BackendRequest) -> Backend:
    model_path = request.model_path
    if model_path is None:
        raise BackendError("the llama backend needs a model file (.gguf)")
    # loads llama_cpp: only when a llama backend is made
    from frogdesk.engine.llama.backend import LlamaBackend

    settings = request.settings
    try:
        backend = LlamaBackend(
            model_path, plan_llama(settings, model_path), progress=request.progress
        )
    except ModelError as exc:
        raise BackendError(str(exc)) from exc
    except MemoryError:
        raise BackendError(
            f"not enough memory to load {model_path.name}; "
            "try a smaller quant or a smaller context, or free some memory"
        ) from None
    say_load_notices(settings, model_path, backend)
    return backend


MAKERS: dict[str, Maker] = {
    LLAMA.name: _make_llama,
    OPENAI.name: _make_openai,
    SCRIPT.name: _make_script,
}
"""How each kind in `engine.kinds` is made, by name."""


def _unknown(name: str) -> Maker:
    def refuse(request: BackendRequest) -> Backend:
        raise BackendError(f"unknown backend {name!r}: choose llama, openai or script")

    return refuse


def make(request: BackendRequest, kind: str) -> Backend:
    """A ready backend of the kind called `kind`; raises BackendError when a part it needs is
    missing or no kind has that name."""
    return MAKERS.get(kind, _unknown(kind))(request)


def loaded_weights(backend: Backend | None) -> LlamaModel | None:
    """The model in memory behind `backend` when its kind shares weights and it is a whole
    loaded backend (not one sequence of a shared context); None otherwise."""
    if backend is None or not kind_of(backend.info.kind).shared_weights:
        return None
    # loads llama_cpp: only when a llama backend is already loaded
    from frogdesk.engine.llama.backend import LlamaBackend

    return backend.model if isinstance(backend, LlamaBackend) else None


def state_owner(backend: Backend | None) -> LlamaBackend | None:
    """The embedded llama backend behind `backend` whose context's state can be saved and
    loaded: a whole backend of a kind that shares weights, on a context of its own (not one
    sequence of a shared context); None for any other."""
    if backend is None or not kind_of(backend.info.kind).shared_weights:
        return None
    # loads llama_cpp: only when a llama backend is already loaded
    from frogdesk.engine.llama.backend import LlamaBackend

    return backend if isinstance(backend, LlamaBackend) else None


def opening_owner(backend: Backend | None) -> ConversationBackend | None:
    """The embedded llama conversation behind `backend`, whole or one sequence of a shared
    context, that can start from a saved shared opening; None for any other."""
    if backend is None or not kind_of(backend.info.kind).shared_weights:
        return None
    # loads llama_cpp: only when a llama backend is already loaded
    from frogdesk.engine.llama.conversation.replying import ConversationBackend

    return backend if isinstance(backend, ConversationBackend) else None


def reopened_like(backend: Backend, model_path: Path) -> Backend | None:
    """A backend on `model_path` with `backend`'s options (context, GPU layers, drafting),
    when `backend` is a whole loaded local model; None when there are no options to reuse."""
    # loads llama_cpp: only on a switch
    from frogdesk.engine.llama.backend import LlamaBackend
    from frogdesk.engine.llama.conversation.replying import ConversationBackend

    if not isinstance(backend, ConversationBackend):
        return None
    return LlamaBackend.like(backend, model_path)


def watch_prefill(backend: Backend, heard: Callable[[int, int], None] | None) -> bool:
    """Have `backend` report each prompt prefill's progress (tokens decoded, tokens to
    decode) where it can (a llama backend, alone or on one sequence of a shared context);
    False where it cannot."""
    if not kind_of(backend.info.kind).local_model:
        return False
    # loads llama_cpp: only when loaded
    from frogdesk.engine.llama.conversation.replying import ConversationBackend

    if not isinstance(backend, ConversationBackend):
        return False
    backend.watch_prefill(heard)
    return True
