"""Memory for N attempts: N KV caches and recurrent states beside one copy of the weights."""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk.attempts.errors import AttemptsError
from frogdesk.attempts.fit import attempts_bytes, fit_attempts
from frogdesk.models.gguf_info import inspect_gguf
from frogdesk.models.memory import OFFLOAD_UBATCH, estimate
from frogdesk.models.system_memory import MemoryAvailable


def test_n_sequences_cost_n_caches_and_one_model(qwen35_gguf: Path) -> None:
    info = inspect_gguf(qwen35_gguf)
    one = estimate(info, 4096)
    assert attempts_bytes(info, 4096, 1, "f16", False) == one.total
    extra = attempts_bytes(info, 4096, 3, "f16", False) - one.total
    assert extra == 2 * (one.kv_cache + one.recurrent_state + one.output)
    assert one.recurrent_state > 0  # the hybrid model's state is counted per sequence


def test_the_repacked_copy_of_the_weights_is_counted_once(
    qwen35_quants: dict[str, Path],
) -> None:
    info = inspect_gguf(qwen35_quants["Q4_0"])
    one = estimate(info, 4096)
    if not one.repack:
        pytest.skip("this CPU repacks no Q4_0 weights")
    assert attempts_bytes(info, 4096, 1, "f16", None) == one.total
    per_sequence = one.kv_cache + one.recurrent_state + one.output
    assert attempts_bytes(info, 4096, 3, "f16", None) == one.total + 2 * per_sequence


def test_more_attempts_get_less_context_and_too_many_are_refused(smollm2_gguf: Path) -> None:
    info = inspect_gguf(smollm2_gguf)
    room = attempts_bytes(info, 2048, 2, "f16", False)
    memory = MemoryAvailable(ram_total=room * 2, ram_free=int(room / 0.9) + 1)
    fit = fit_attempts(info, memory, 2, ceiling=131072)
    table = dict(fit.table)
    assert fit.per_sequence == table[2] == 2048
    assert table[1] > table[2] > table[3] > table[4]
    assert "2 attempts share one model" in fit.describe() and "1: " in fit.describe()
    with pytest.raises(AttemptsError) as refused:
        fit_attempts(info, memory, 2, wanted=table[2] + 1024, ceiling=131072)
    message = str(refused.value)
    assert "do not fit" in message and f"2 at {table[2]:,} tokens each" in message
    tiny = MemoryAvailable(ram_total=1, ram_free=info.tensor_bytes)
    with pytest.raises(AttemptsError, match="not even one attempt fits"):
        fit_attempts(info, tiny, 3)


def test_with_a_gpu_the_fit_counts_the_gpu_batches(smollm2_gguf: Path) -> None:
    """A GPU load computes 512 tokens at once, the CPU alone 256: the same memory split
    between RAM and VRAM holds less context per attempt than all in RAM."""
    info = inspect_gguf(smollm2_gguf)
    assert attempts_bytes(info, 4096, 2, "f16", False, OFFLOAD_UBATCH) > attempts_bytes(
        info, 4096, 2, "f16", False
    )
    room = attempts_bytes(info, 8192, 2, "f16", False)
    cpu = MemoryAvailable(ram_total=room * 2, ram_free=int(room / 0.9) + 1)
    half = cpu.ram_free // 2
    gpu = MemoryAvailable(
        ram_total=room * 2, ram_free=half, vram_total=half, vram_free=cpu.ram_free - half
    )
    cpu_table, gpu_table = (
        dict(fit_attempts(info, cpu, 2).table),
        dict(fit_attempts(info, gpu, 2).table),
    )
    assert cpu_table[2] == 8192  # control: the budget holds 8,192 tokens each on the CPU
    assert all(gpu_table[k] <= cpu_table[k] for k in cpu_table)
    assert gpu_table[2] < cpu_table[2]
