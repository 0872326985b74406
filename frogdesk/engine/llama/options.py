"""How a model is loaded and run by llama.cpp: one settings object from the config to the context."""

from __future__ import annotations

from dataclasses import dataclass

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
    flash_attn: bool = False
    kv_cache_type: str = "f16"
    """ggml type of the attention cache (see `model.KV_CACHE_TYPES`)."""
    seed: int | None = None
    """Default seed for replies whose settings give none."""
    n_batch: int = 512
    """Tokens per llama_decode call in prefill."""
    n_ubatch: int = 512
    """Tokens llama.cpp computes at once inside a call (at most `n_batch`); sizes the
    compute buffer."""
    use_mmap: bool = True
    """Map the file instead of reading it (weights llama.cpp repacks for the CPU then exist
    twice: mapped and repacked)."""
    max_snapshots: int = 4
    """Recurrent-state snapshots kept for going back (hybrid models; ~50 MiB each for 4B)."""
    speculative: bool = True
    """Draft tokens from the conversation's own text and verify them in one batch when that
    pays (same output; off: one token per decode step)."""
    verbose: bool = False
    """Echo llama.cpp's log to stderr (it is always captured in `load_log`)."""

    @property
    def threads(self) -> int:
        """The thread count actually used (`n_threads`, or the physical cores)."""
        return thread_count(self.n_threads)
