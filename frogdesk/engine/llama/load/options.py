"""How a model is loaded and run by llama.cpp: one settings object from the config to the context."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from frogdesk.models.memory import default_flash_attn, default_ubatch, default_use_mmap
from frogdesk.system import thread_count


@dataclass(frozen=True)
class LlamaOptions:
    """Every llama.cpp setting FrogDesk chooses for one model; `LlamaBackend.like` reuses them."""

    n_ctx: int = 8192
    """Context size in tokens (capped by the model's training context)."""
    n_threads: int = 0
    """CPU threads for decoding and prefill; 0 is one per physical core."""
    n_gpu_layers: int = 0
    """Layers offloaded to the GPU (-1: all)."""
    flash_attn: bool | None = None
    """Flash attention on or off; None decides per model (`flash_attn_for`)."""
    kv_cache_type: str = "f16"
    """ggml type of the attention cache (see `model.KV_CACHE_TYPES`)."""
    seed: int | None = None
    """Default seed for replies whose settings give none."""
    n_batch: int = 512
    """Tokens per llama_decode call in prefill."""
    n_ubatch: int | None = None
    """Tokens llama.cpp computes at once inside a call (at most `n_batch`); sizes the
    compute buffer. None: 256 on the CPU alone, 512 with layers offloaded
    (`models.memory.default_ubatch`)."""
    use_mmap: bool | None = None
    """Map the file (True) or read it (False); None decides per file: read when llama.cpp
    repacks a large share of its weights for the CPU (mapped, those would stay resident
    twice), else mapped (`models.memory.default_use_mmap`)."""
    max_snapshots: int = 4
    """Recurrent-state snapshots kept for going back (hybrid models; ~50 MiB each for 4B);
    the shared opening's is one of them, kept first."""
    speculative: bool = True
    """Draft tokens from the conversation's own text and verify them in one batch when that
    pays (every token still the model's own pick for its position; off: one token per decode
    step)."""
    verbose: bool = False
    """Echo llama.cpp's log to stderr (it is always captured in `load_log`)."""

    def mmap_for(self, repackable: Mapping[str, int], tensor_bytes: int) -> bool:
        """Whether a file with these repackable bytes (by quant type) is mapped.

        Layers offloaded to a GPU are not repacked, so with offload the file is mapped
        unless `use_mmap` says otherwise.
        """
        if self.use_mmap is not None:
            return self.use_mmap
        if self.n_gpu_layers != 0:
            return True
        return default_use_mmap(repackable, tensor_bytes)

    def flash_attn_for(self, hybrid: bool) -> bool:
        """Whether a model (hybrid or not) runs with flash attention under these options."""
        if self.flash_attn is not None:
            return self.flash_attn
        return default_flash_attn(self.kv_cache_type, hybrid)

    @property
    def ubatch(self) -> int:
        """The ubatch llama.cpp is given: `n_ubatch`, or FrogDesk's choice, at most `n_batch`."""
        chosen = self.n_ubatch or default_ubatch(self.n_gpu_layers != 0)
        return min(chosen, self.n_batch)

    @property
    def threads(self) -> int:
        """The thread count actually used (`n_threads`, or the physical cores)."""
        return thread_count(self.n_threads)
