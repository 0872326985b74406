"""llama.cpp's own decode loop written on the low-level API: the reference the benches compare with.

Nothing of FrogDesk's engine is used here beyond the model handle: a context made with
`llama_init_from_model`, one `llama_batch`, `llama_decode`, and a greedy sampler chain.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import llama_cpp

KV_TYPES = {"f16": llama_cpp.GGML_TYPE_F16, "q8_0": llama_cpp.GGML_TYPE_Q8_0}


@dataclass(frozen=True)
class RawSettings:
    """Context parameters of the reference loop."""

    n_ctx: int = 4096
    n_batch: int = 512
    n_ubatch: int = 512
    threads: int = 2
    threads_batch: int = 0
    """0: the same as `threads`."""
    flash_attn: bool = False
    kv_type: str = "f16"


class RawContext:
    """A llama.cpp context on one model with a reusable batch and a greedy sampler."""

    def __init__(self, model: Any, settings: RawSettings) -> None:
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = settings.n_ctx
        params.n_batch = settings.n_batch
        params.n_ubatch = settings.n_ubatch
        params.n_seq_max = 1
        params.n_threads = settings.threads
        params.n_threads_batch = settings.threads_batch or settings.threads
        params.flash_attn_type = (
            llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
            if settings.flash_attn
            else llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        )
        params.type_k = KV_TYPES[settings.kv_type]
        params.type_v = KV_TYPES[settings.kv_type]
        params.no_perf = True
        ctx = llama_cpp.llama_init_from_model(model, params)
        if not ctx:
            raise RuntimeError(f"llama_init_from_model failed for {settings}")
        self.ctx: Any = ctx
        self.settings = settings
        self.batch = llama_cpp.llama_batch_init(settings.n_batch, 0, 1)
        self.sampler = llama_cpp.llama_sampler_chain_init(
            llama_cpp.llama_sampler_chain_default_params()
        )
        llama_cpp.llama_sampler_chain_add(self.sampler, llama_cpp.llama_sampler_init_greedy())

    def _decode(self, tokens: Sequence[int], start: int, logits_last: bool) -> None:
        b = self.batch
        for i, token in enumerate(tokens):
            b.token[i] = token
            b.pos[i] = start + i
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = 0
            b.logits[i] = False
        b.logits[len(tokens) - 1] = logits_last
        b.n_tokens = len(tokens)
        rc = llama_cpp.llama_decode(self.ctx, b)
        if rc != 0:
            raise RuntimeError(f"llama_decode returned {rc} at {start}")

    def clear(self) -> None:
        """Forget every position."""
        llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(self.ctx), True)

    def prefill(self, tokens: Sequence[int], start: int = 0) -> float:
        """Decode `tokens` in n_batch chunks (logits for the last one); returns the seconds."""
        n = self.settings.n_batch
        began = time.perf_counter()
        for done in range(0, len(tokens), n):
            chunk = tokens[done : done + n]
            self._decode(chunk, start + done, done + len(chunk) == len(tokens))
        return time.perf_counter() - began

    def generate(self, steps: int, start: int) -> float:
        """Sample greedily and decode `steps` tokens from `start` on; returns the seconds.

        The first sample reads the logits the prefill left.
        """
        began = time.perf_counter()
        for i in range(steps):
            token = llama_cpp.llama_sampler_sample(self.sampler, self.ctx, -1)
            self._decode([token], start + i, True)
        return time.perf_counter() - began

    def close(self) -> None:
        """Free the sampler, the batch and the context."""
        llama_cpp.llama_sampler_free(self.sampler)
        llama_cpp.llama_batch_free(self.batch)
        llama_cpp.llama_free(self.ctx)


def load_model(path: str, *, use_mmap: bool = True) -> Any:
    """A `llama_model *` loaded on the CPU (free with `llama_model_free`)."""
    llama_cpp.llama_backend_init()
    params = llama_cpp.llama_model_default_params()
    params.n_gpu_layers = 0
    params.load_mode = (
        llama_cpp.LLAMA_LOAD_MODE_MMAP if use_mmap else llama_cpp.LLAMA_LOAD_MODE_NONE
    )
    model = llama_cpp.llama_model_load_from_file(path.encode(), params)
    if not model:
        raise RuntimeError(f"cannot load {path}")
    return model


def proc_status() -> dict[str, int]:
    """VmRSS, VmHWM, RssAnon and RssFile of this process in bytes (Linux)."""
    out: dict[str, int] = {}
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                out[key] = int(value.split()[0]) * 1024
    return out
