"""The backends of N attempts: one llama context of N sequences, or one backend each."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from frogdesk.attempts.fit import AttemptsFit, fit_attempts
from frogdesk.config import Settings
from frogdesk.engine.backends import settings_options
from frogdesk.engine.chat import Backend
from frogdesk.engine.kinds import kind_of
from frogdesk.engine.registry import loaded_weights
from frogdesk.models.gguf_info import inspect_gguf
from frogdesk.models.system_memory import available_memory
from frogdesk.sessions.factories import BackendFactory
from frogdesk.sessions.parts import default_backend, resolve_model_path
from frogdesk.sessions.record import SessionRecord

if TYPE_CHECKING:
    from frogdesk.engine.llama.load.model import LlamaModel
    from frogdesk.engine.llama.shared import SharedLlama


def llama_fit(settings: Settings, model: str, n: int) -> AttemptsFit:
    """The context each of `n` llama attempts gets on this machine; raises AttemptsError
    naming which N fits at which context when `n` does not."""
    return fit_attempts(
        inspect_gguf(resolve_model_path(model, settings)),
        available_memory(),
        n,
        kv_type=settings.engine.kv_cache_type,
        flash=settings.engine.flash_attn_choice,
        wanted=settings.engine.context_size,
        ceiling=settings.loop.max_context_tokens,
    )


def loaded_model(backend: Backend | None) -> LlamaModel | None:
    """The model of `backend` when it is a loaded llama backend (attempts can use it)."""
    return loaded_weights(backend)


def open_shared(
    record: SessionRecord, settings: Settings, n: int, loaded: LlamaModel | None = None
) -> SharedLlama:
    """The record's model with a context of `n` sequences sized to fit memory: `loaded`
    when it is that file (nothing is loaded then), else loaded once here."""
    # loads llama_cpp: only when llama attempts start
    from frogdesk.engine.llama.shared import SharedLlama

    path = resolve_model_path(record.model, settings)
    if loaded is not None and Path(loaded.path).resolve() != path.resolve():
        loaded = None
    fit = llama_fit(settings, record.model, n)
    options = dataclasses.replace(
        settings_options(settings),
        n_ctx=fit.per_sequence,
        n_gpu_layers=max(settings.engine.gpu_layers, 0),
    )
    return SharedLlama(path, n, options, model=loaded)


@contextlib.contextmanager
def attempt_backends(
    n: int,
    on_plan: Callable[[str], None] | None = None,
    loaded: LlamaModel | None = None,
) -> Iterator[BackendFactory]:
    """The backend factory for `n` attempts that run at the same time; closes what it made.

    llama attempts are `n` sequences of one context on one model (decoded in shared
    batches, the opening evaluated once): `loaded`, a model already in memory (the TUI's),
    when it is the attempts' file, else one loaded here; `on_plan` hears the context each
    one gets. Script and openai attempts each get a backend of their own (N concurrent
    requests on openai). A backend loaded elsewhere is never handed to an attempt: only
    its weights are shared, each attempt has its own sequence and transcript.
    """
    lock = threading.Lock()
    shared: list[SharedLlama] = []
    handed = 0

    def build(record: SessionRecord, settings: Settings, replies_done: int = 0) -> Backend:
        nonlocal handed
        if not kind_of(record.backend).shared_weights:
            return default_backend(record, settings, replies_done)
        with lock:
            if not shared:
                shared.append(open_shared(record, settings, n, loaded))
                if on_plan is not None:
                    on_plan(
                        f"{n} attempts on one model: {shared[0].n_ctx_seq:,} tokens of "
                        "context each, decoded in shared batches"
                    )
            backend = shared[0].backends[handed]
            handed += 1
        return backend

    try:
        yield build
    finally:
        for one in shared:
            one.close()
