"""Choosing and building the engine backend that the settings ask for."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from frogdesk.config import Settings
from frogdesk.engine.types import Backend
from frogdesk.errors import FrogDeskError

FALLBACK_CONTEXT = 8192
"""Context size used when the memory plan cannot read the model (the load then reports why)."""


class BackendError(FrogDeskError, ValueError):
    """The settings do not describe a usable backend; the message says what to set."""


@dataclass(frozen=True)
class LlamaLaunch:
    """The llama.cpp settings chosen for one model on this machine."""

    n_ctx: int
    n_threads: int
    n_gpu_layers: int


def default_threads() -> int:
    """Threads for llama.cpp when none are configured: the CPUs this process may use, halved
    for hyper-threading (physical cores decode fastest), at least one."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count() or 1
    return max(1, usable // 2)


def plan_llama(settings: Settings, model_path: Path) -> LlamaLaunch:
    """Context size, threads and GPU layers for `model_path` from the settings and free memory.

    `context_size` 0 takes the largest context that fits (at most `max_context_tokens`);
    `gpu_layers` -1 lets the memory plan decide.
    """
    from frogdesk.models.errors import ModelError
    from frogdesk.models.gguf_info import inspect_gguf
    from frogdesk.models.memory import CONTEXT_PAD, largest_context, plan
    from frogdesk.models.system_memory import available_memory

    threads = settings.threads if settings.threads > 0 else default_threads()
    n_ctx = settings.context_size
    gpu_layers = settings.gpu_layers
    capped = _plan_under_cap(settings, model_path, threads)
    if capped is not None:
        return capped
    if n_ctx > 0 and gpu_layers >= 0:
        return LlamaLaunch(n_ctx, threads, gpu_layers)
    try:
        info = inspect_gguf(model_path)
    except (ModelError, OSError, ValueError):
        # The load itself gives the precise error for a missing or broken file.
        return LlamaLaunch(n_ctx or FALLBACK_CONTEXT, threads, max(gpu_layers, 0))
    memory = available_memory()
    if n_ctx <= 0:
        n_ctx = largest_context(
            info,
            memory,
            settings.kv_cache_type,
            settings.flash_attn,
            ceiling=settings.max_context_tokens,
        )
        if n_ctx <= 0:
            smallest = plan(info, CONTEXT_PAD, memory, settings.kv_cache_type, settings.flash_attn)
            raise BackendError(
                f"not enough memory to load {model_path.name}: it needs about "
                f"{smallest.estimate.total / 2**30:.2f} GiB, "
                f"{memory.ram_free / 2**30:.2f} GiB free; "
                "try a smaller quant or a smaller context, or free some memory"
            )
    if gpu_layers < 0:
        gpu_layers = plan(
            info, n_ctx, memory, settings.kv_cache_type, settings.flash_attn
        ).gpu_layers
    return LlamaLaunch(n_ctx, threads, gpu_layers)


def _plan_under_cap(settings: Settings, model_path: Path, threads: int) -> LlamaLaunch | None:
    """The launch under an address-space cap (RLIMIT_AS), from the GGUF header alone; None
    when there is no cap. Raises BackendError when the model cannot fit under it.

    The full GGUF reader is not used here: its own objects could reach the cap. Layers stay
    on the CPU unless `gpu_layers` says otherwise.
    """
    from frogdesk.engine.llama_fit import DoesNotFitError, address_space_room, fit_under_cap

    room = address_space_room()
    if room is None:
        return None
    try:
        fit = fit_under_cap(
            model_path,
            room,
            n_ctx=settings.context_size,
            n_threads=threads,
            kv_type=settings.kv_cache_type,
            flash_attn=settings.flash_attn,
            ceiling=settings.max_context_tokens,
        )
    except DoesNotFitError as exc:
        raise BackendError(str(exc)) from None
    return LlamaLaunch(fit.n_ctx, threads, max(settings.gpu_layers, 0))


def make_backend(
    settings: Settings,
    *,
    model_path: Path | None = None,
    script: Path | None = None,
    endpoint: str | None = None,
) -> Backend:
    """The backend named by `settings.backend`: `llama`, `openai` or `script`.

    Raises `BackendError` when something it needs is missing (a model problem found by
    frogdesk.models included); a file llama.cpp cannot load raises the llama backend's
    own `ModelLoadError` (or `TemplateError` for an unusable chat template).
    """
    kind = settings.backend
    if kind == "script":
        from frogdesk.engine.script_backend import ScriptBackend, ScriptError

        if script is None:
            raise BackendError("the script backend needs a JSONL file of replies (--script FILE)")
        try:
            return ScriptBackend(script)
        except ScriptError as exc:
            raise BackendError(str(exc)) from None
    if kind == "openai":
        from frogdesk.engine.openai_backend import EndpointError, OpenAIBackend

        url = endpoint or settings.openai_endpoint
        if not url:
            raise BackendError(
                "the openai backend needs an endpoint: set openai_endpoint, "
                "e.g. http://localhost:8000/v1"
            )
        try:
            return OpenAIBackend(url, model=settings.openai_model)
        except EndpointError as exc:
            raise BackendError(str(exc)) from None
    if kind == "llama":
        if model_path is None:
            raise BackendError("the llama backend needs a model file (.gguf)")
        from frogdesk.engine.llama_backend import LlamaBackend
        from frogdesk.models.errors import ModelError

        try:
            launch = plan_llama(settings, model_path)
            return LlamaBackend(
                model_path,
                n_ctx=launch.n_ctx,
                n_threads=launch.n_threads,
                n_gpu_layers=launch.n_gpu_layers,
                flash_attn=settings.flash_attn,
                kv_cache_type=settings.kv_cache_type,
                seed=settings.seed if settings.seed >= 0 else None,
            )
        except ModelError as exc:
            raise BackendError(str(exc)) from exc
        except MemoryError:
            raise BackendError(
                f"not enough memory to load {model_path.name}; "
                "try a smaller quant or a smaller context, or free some memory"
            ) from None
    raise BackendError(f"unknown backend {kind!r}: choose llama, openai or script")
