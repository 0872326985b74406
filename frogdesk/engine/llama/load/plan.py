"""The llama.cpp options of a model from the settings and free memory, and its load notices."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from frogdesk.config import Settings
from frogdesk.engine.chat import Backend
from frogdesk.engine.errors import BackendError
from frogdesk.engine.llama.errors import DoesNotFitError
from frogdesk.engine.llama.load.fit import address_space_room, fit_under_cap
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.logfile import say_notice
from frogdesk.models.errors import ModelError
from frogdesk.models.gguf_info import inspect_gguf
from frogdesk.models.memory import CONTEXT_PAD, UNQUANTIZED_KV, largest_context, plan
from frogdesk.models.system_memory import available_memory
from frogdesk.sizes import gib

FALLBACK_CONTEXT = 8192
"""Context size used when the memory plan cannot read the model (the load then reports why)."""


def plan_llama(settings: Settings, model_path: Path) -> LlamaOptions:
    """The llama.cpp options for `model_path` from the settings and free memory.

    `context_size` 0 takes the largest context that fits (at most `max_context_tokens`);
    `gpu_layers` -1 lets the memory plan decide; `threads` 0 is one per physical core.
    """
    base = settings_options(settings)
    n_ctx = settings.engine.context_size
    gpu_layers = settings.engine.gpu_layers
    capped = _plan_under_cap(settings, model_path, base)
    if capped is not None:
        return capped
    if n_ctx > 0 and gpu_layers >= 0:
        return replace(base, n_ctx=n_ctx, n_gpu_layers=gpu_layers)
    try:
        info = inspect_gguf(model_path)
    except (ModelError, OSError, ValueError):
        # The load itself gives the precise error for a missing or broken file.
        return replace(base, n_ctx=n_ctx or FALLBACK_CONTEXT, n_gpu_layers=max(gpu_layers, 0))
    memory = available_memory()
    if n_ctx <= 0:
        n_ctx = largest_context(
            info,
            memory,
            settings.engine.kv_cache_type,
            settings.engine.flash_attn_choice,
            ceiling=settings.loop.max_context_tokens,
            drafting=settings.engine.speculative,
        )
        if n_ctx <= 0:
            smallest = plan(
                info, CONTEXT_PAD, memory, settings.engine.kv_cache_type, settings.engine.flash_attn_choice,
                drafting=settings.engine.speculative,
            )  # fmt: skip
            raise BackendError(
                f"not enough memory to load {model_path.name}: it needs about "
                f"{gib(smallest.estimate.total)}, {gib(memory.ram_free)} free; "
                "try a smaller quant or a smaller context, or free some memory"
            )
    if gpu_layers < 0:
        gpu_layers = plan(
            info, n_ctx, memory, settings.engine.kv_cache_type, settings.engine.flash_attn_choice,
            drafting=settings.engine.speculative,
        ).gpu_layers  # fmt: skip
    return replace(base, n_ctx=n_ctx, n_gpu_layers=gpu_layers)


def settings_options(settings: Settings) -> LlamaOptions:
    """The llama options the settings fix by themselves (context and GPU layers still to plan).

    Raises BackendError for a quantized KV cache with flash attention off, which llama.cpp
    cannot make a context of.
    """
    if (
        settings.engine.flash_attn_choice is False
        and settings.engine.kv_cache_type not in UNQUANTIZED_KV
    ):
        raise BackendError(
            f"kv_cache_type {settings.engine.kv_cache_type} needs flash attention: set flash_attn "
            "to auto or on, or kv_cache_type to f16"
        )
    return LlamaOptions(
        n_ctx=settings.engine.context_size
        if settings.engine.context_size > 0
        else FALLBACK_CONTEXT,
        n_threads=settings.engine.threads if settings.engine.threads > 0 else 0,
        n_gpu_layers=max(settings.engine.gpu_layers, 0),
        flash_attn=settings.engine.flash_attn_choice,
        kv_cache_type=settings.engine.kv_cache_type,
        seed=settings.loop.seed if settings.loop.seed >= 0 else None,
        speculative=settings.engine.speculative,
    )


def _plan_under_cap(
    settings: Settings, model_path: Path, base: LlamaOptions
) -> LlamaOptions | None:
    """The launch under an address-space cap (RLIMIT_AS), from the GGUF header alone; None
    when there is no cap. Raises BackendError when the model cannot fit under it.

    The full GGUF reader is not used here: its own objects could reach the cap. Layers stay
    on the CPU unless `gpu_layers` says otherwise.
    """
    room = address_space_room()
    if room is None:
        return None
    try:
        fit = fit_under_cap(
            model_path,
            room,
            n_ctx=settings.engine.context_size,
            n_threads=base.threads,
            kv_type=settings.engine.kv_cache_type,
            flash_attn=settings.engine.flash_attn_choice,
            ceiling=settings.loop.max_context_tokens,
            drafting=settings.engine.speculative,
        )
    except DoesNotFitError as exc:
        raise BackendError(str(exc)) from None
    return replace(base, n_ctx=fit.n_ctx)


def say_load_notices(settings: Settings, model_path: Path, backend: Backend) -> None:
    """Say, as notices, where a loaded llama model runs otherwise than the settings ask: a
    context cut to what the model was trained for, GPU layers asked of a build that cannot
    offload."""
    held = backend.info.context_size
    if 0 < held < settings.engine.context_size:
        say_notice(
            f"{model_path.name} was trained on {held:,} tokens of context: FrogDesk uses "
            f"{held:,}, not the {settings.engine.context_size:,} that context_size asks"
        )
    if settings.engine.gpu_layers > 0 and backend.info.device == "CPU":
        say_notice(
            f"gpu_layers asks for {settings.engine.gpu_layers} layers on a GPU, but this llama.cpp "
            "cannot offload: the model runs on the CPU (`frogdesk doctor` shows the build)"
        )
