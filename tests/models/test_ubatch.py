"""The batch llama.cpp computes at once: 256 tokens on the CPU alone, 512 with offload."""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.models.gguf_info import inspect_gguf
from frogdesk.models.memory import CPU_UBATCH, OFFLOAD_UBATCH, estimate


def test_the_ubatch_follows_the_offload_unless_set() -> None:
    assert LlamaOptions().ubatch == CPU_UBATCH == 256
    assert LlamaOptions(n_gpu_layers=-1).ubatch == OFFLOAD_UBATCH == 512
    assert LlamaOptions(n_gpu_layers=4).ubatch == OFFLOAD_UBATCH
    assert LlamaOptions(n_ubatch=128).ubatch == 128
    assert LlamaOptions(n_batch=64).ubatch == 64  # never more than a call holds


@pytest.mark.llama
def test_a_cpu_load_computes_256_tokens_at_once_in_half_the_buffer(qwen35_gguf: Path) -> None:
    """llama.cpp's own compute buffer, with FrogDesk's choice and with 512 (the control),
    each matching the estimate for its ubatch."""
    info = inspect_gguf(qwen35_gguf)
    sizes = {}
    for ubatch in (None, OFFLOAD_UBATCH):
        options = LlamaOptions(n_ctx=8192, n_threads=2, n_ubatch=ubatch)
        backend = LlamaBackend(qwen35_gguf, options)
        try:
            sizes[options.ubatch] = backend.buffer_sizes()["CPU compute"]
        finally:
            backend.close()
        est = estimate(info, 8192, options.kv_cache_type, options.ubatch, options.flash_attn)
        assert est.compute / 2**20 == pytest.approx(sizes[options.ubatch], rel=0.05)
    assert set(sizes) == {CPU_UBATCH, OFFLOAD_UBATCH}
    assert sizes[CPU_UBATCH] < 0.6 * sizes[OFFLOAD_UBATCH]
