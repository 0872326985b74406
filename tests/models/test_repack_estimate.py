"""Weights llama.cpp repacks for the CPU: a second copy beside a mapped file, counted by the estimate."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from frogdesk import cli
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.models.gguf_info import inspect_gguf
from frogdesk.models.memory import cpu_repack_types, default_use_mmap, estimate, repack_bytes

OPTIONS = LlamaOptions(n_ctx=4096, n_threads=2)
REPACK_BUFFER = "CPU_REPACK model"


def buffers(path: Path, options: LlamaOptions) -> dict[str, float]:
    """llama.cpp's own buffer sizes (MiB) for `path` loaded with `options`."""
    backend = LlamaBackend(path, options)
    try:
        return backend.buffer_sizes()
    finally:
        backend.close()


def test_repack_types_follow_the_cpu_flags() -> None:
    assert cpu_repack_types(frozenset({"fpu", "avx2"})) >= {"Q4_0", "Q4_K"}
    assert "Q4_0" in cpu_repack_types(frozenset({"asimd", "asimddp"}))
    assert cpu_repack_types(frozenset({"fpu", "sse4_2"})) == frozenset()


@pytest.mark.llama
def test_the_repacked_copy_is_what_llama_cpp_allocates(qwen35_quants: dict[str, Path]) -> None:
    """On this CPU the Q4_0 weights are repacked (or not) exactly as the estimate says."""
    path = qwen35_quants["Q4_0"]
    info = inspect_gguf(path)
    mapped = buffers(path, replace(OPTIONS, use_mmap=True))
    ours = repack_bytes(info) / 2**20
    assert mapped.get(REPACK_BUFFER, 0.0) == pytest.approx(ours, rel=0.01, abs=0.01)
    if cpu_repack_types():
        assert ours > 0, "the test model has weights this CPU repacks"
    est = estimate(info, OPTIONS.n_ctx, use_mmap=True)
    assert est.repack == repack_bytes(info)
    assert est.total / 2**20 == pytest.approx(sum(mapped.values()), rel=0.15)
    # Read without mmap, the repacked tensors go straight into their copy: the plain weights
    # buffer holds only the rest, and nothing is mapped.
    read = buffers(path, replace(OPTIONS, use_mmap=False))
    assert read.get(REPACK_BUFFER, 0.0) == pytest.approx(ours, rel=0.01, abs=0.01)
    assert "CPU_Mapped model" not in read
    rest = (info.tensor_bytes - repack_bytes(info)) / 2**20
    assert read["CPU model"] == pytest.approx(rest, rel=0.01, abs=0.01)
    assert mapped["CPU_Mapped model"] == pytest.approx(info.tensor_bytes / 2**20, abs=0.01)


@pytest.mark.llama
@pytest.mark.parametrize("use_mmap", [None, True, False])
@pytest.mark.parametrize("n_ctx", [2048, 8192])
def test_the_estimate_is_within_5_percent_of_llama_cpp(
    qwen35_quants: dict[str, Path], use_mmap: bool | None, n_ctx: int
) -> None:
    """With the options FrogDesk loads a repacked model with (None: its own choice), mapped
    or read."""
    path = qwen35_quants["Q4_0"]
    info = inspect_gguf(path)
    options = replace(LlamaOptions(), n_ctx=n_ctx, n_threads=2, use_mmap=use_mmap)
    allocated = buffers(path, options)
    est = estimate(
        info, n_ctx, options.kv_cache_type, options.ubatch, options.flash_attn,
        use_mmap=use_mmap,
    )  # fmt: skip
    if use_mmap is None:
        use_mmap = default_use_mmap(info.repackable_bytes, info.tensor_bytes)
    weights = allocated["CPU_Mapped model" if use_mmap else "CPU model"]
    assert est.weights / 2**20 == pytest.approx(weights, rel=0.01, abs=0.01)
    assert est.repack / 2**20 == pytest.approx(allocated.get(REPACK_BUFFER, 0.0), abs=0.01)
    assert est.total / 2**20 == pytest.approx(sum(allocated.values()), rel=0.05)
    # control: the other way of loading gives a weights figure these buffers do not match
    if cpu_repack_types():
        other = estimate(info, n_ctx, use_mmap=not use_mmap)
        assert other.weights / 2**20 != pytest.approx(weights, rel=0.01, abs=0.01)


def test_models_info_reports_the_load_options(
    qwen35_gguf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["models", "info", str(qwen35_gguf), "--json", "--context", "2048"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    load = out["load"]
    assert set(load) >= {"use_mmap", "flash_attn", "kv_cache_type", "n_batch", "n_ubatch"}
    assert (load["use_mmap"], load["kv_cache_type"], load["n_ubatch"]) == (True, "f16", 256)
    assert out["estimate"]["repack"] == repack_bytes(inspect_gguf(qwen35_gguf))


def test_a_file_mostly_repacked_is_read_and_others_are_mapped() -> None:
    avx2 = frozenset({"Q4_0", "Q4_K", "IQ4_NL"})
    assert default_use_mmap({"Q4_K": 600, "Q6_K": 400}, 1000, avx2) is False
    assert default_use_mmap({"Q4_K": 100, "Q6_K": 900}, 1000, avx2) is True
    assert default_use_mmap({"Q4_K": 600}, 1000, frozenset()) is True  # nothing repacked here
    assert default_use_mmap({}, 0, avx2) is True
    options = LlamaOptions()
    assert options.mmap_for({"Q4_K": 900}, 1000) is bool(not cpu_repack_types() >= {"Q4_K"})
    assert replace(options, use_mmap=True).mmap_for({"Q4_K": 900}, 1000) is True
    assert replace(options, n_gpu_layers=-1).mmap_for({"Q4_K": 900}, 1000) is True


@pytest.mark.llama
def test_frogdesk_reads_a_repacked_file_and_maps_the_rest(
    qwen35_quants: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """What `models info` says FrogDesk loads with is what the load does."""
    if not cpu_repack_types() >= {"Q4_0"}:
        pytest.skip("this CPU repacks no Q4_0 weights")
    for name, mapped in (("Q4_0", False), ("F16", True)):
        path = qwen35_quants[name]
        assert cli.main(["models", "info", str(path), "--json", "--context", "2048"]) == 0
        assert json.loads(capsys.readouterr().out)["load"]["use_mmap"] is mapped
        allocated = buffers(path, replace(OPTIONS, use_mmap=None))
        assert ("CPU_Mapped model" in allocated) is mapped
        assert ("CPU model" in allocated) is not mapped
