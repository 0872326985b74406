"""GGUF inspection against llama.cpp's own view, and the memory estimate against its allocations."""

from __future__ import annotations

import ctypes
import json
from pathlib import Path

import llama_cpp
import pytest

from frogdesk import cli
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.models.errors import ModelError
from frogdesk.models.gguf_info import inspect_gguf
from frogdesk.models.memory import (
    CPU_UBATCH,
    OFFLOAD_UBATCH,
    compute_bytes,
    estimate,
    largest_context,
    largest_fitting,
    plan,
)
from frogdesk.models.system_memory import MemoryAvailable

TOLERANCE = 0.15


def _llama_view(path: Path) -> dict[str, object]:
    params = llama_cpp.llama_model_default_params()
    model = llama_cpp.llama_model_load_from_file(str(path).encode(), params)
    assert model, f"llama.cpp could not load {path}"
    try:
        buf = ctypes.create_string_buffer(256)
        llama_cpp.llama_model_meta_val_str(model, b"general.architecture", buf, len(buf))
        return {
            "architecture": buf.value.decode(),
            "block_count": llama_cpp.llama_model_n_layer(model),
            "context_length": llama_cpp.llama_model_n_ctx_train(model),
            "embedding_length": llama_cpp.llama_model_n_embd(model),
            "head_count": llama_cpp.llama_model_n_head(model),
            "parameters": llama_cpp.llama_model_n_params(model),
            "chat_template": bool(llama_cpp.llama_model_chat_template(model, None)),
        }
    finally:
        llama_cpp.llama_model_free(model)


@pytest.fixture(params=["smollm2", "qwen35", "qwen35-split"])
def test_model(request: pytest.FixtureRequest) -> Path:
    if request.param == "smollm2":
        path: Path = request.getfixturevalue("smollm2_gguf")
        return path
    if request.param == "qwen35-split":
        parts: list[Path] = request.getfixturevalue("split_q8")
        return parts[0]
    quants: dict[str, Path] = request.getfixturevalue("qwen35_quants")
    return quants["Q8_0"]


@pytest.mark.llama
def test_models_info_matches_llama_cpp(
    test_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["models", "info", str(test_model), "--json"])
    out, _ = capsys.readouterr()
    assert code == 0
    ours = json.loads(out)["metadata"]
    theirs = _llama_view(test_model)
    assert {k: ours[k] for k in theirs} == theirs


def test_hybrid_layout_is_read_from_metadata(qwen35_gguf: Path) -> None:
    info = inspect_gguf(qwen35_gguf)
    assert (info.architecture, info.block_count, info.full_attention_interval) == ("qwen35", 4, 4)
    assert (info.full_attention_layers, info.recurrent_layers) == (1, 3)
    assert info.sampling["top_k"] == 20 and info.sampling["temp"] == pytest.approx(0.6)
    assert (
        info.kv_bytes_per_token_f16
        == 1 * info.head_count_kv * (info.key_length + info.value_length) * 2
    )


def test_truncated_file_is_a_clear_error(qwen35_gguf: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut-Q8_0.gguf"
    cut.write_bytes(qwen35_gguf.read_bytes()[:5000])
    with pytest.raises(ModelError, match="truncated or corrupt"):
        inspect_gguf(cut)
    missing_part = tmp_path / "m-Q8_0-00001-of-00002.gguf"
    missing_part.write_bytes(qwen35_gguf.read_bytes())
    with pytest.raises(ModelError, match="split part missing"):
        inspect_gguf(missing_part)


@pytest.mark.llama
@pytest.mark.parametrize("context", [512, 4096])
def test_estimate_within_15_percent_of_llama_cpp(test_model: Path, context: int) -> None:
    backend = LlamaBackend(test_model, LlamaOptions(n_ctx=context, n_threads=2))
    try:
        reported = backend.buffer_sizes()
    finally:
        backend.close()
    actual_mib = sum(reported.values())
    est = estimate(inspect_gguf(test_model), context)
    error = est.total / 2**20 / actual_mib - 1
    print(
        f"{test_model.name} ctx={context}: estimate {est.total / 2**20:.2f} MiB, llama.cpp {actual_mib:.2f} MiB ({error:+.1%}) {reported}"
    )
    assert abs(error) < TOLERANCE
    kv_reported = sum(v for k, v in reported.items() if k.endswith(" KV"))
    assert est.kv_cache / 2**20 == pytest.approx(kv_reported, abs=0.01)


def test_offload_plan_and_largest_context(qwen35_gguf: Path) -> None:
    info = inspect_gguf(qwen35_gguf)
    need = estimate(info, 4096).total
    roomy = MemoryAvailable(ram_total=2**40, ram_free=2**40)
    assert plan(info, 4096, roomy).offload == "none" and plan(info, 4096, roomy).fits
    assert largest_context(info, roomy) == info.context_length
    tight = MemoryAvailable(ram_total=need, ram_free=int(need / 0.9) + 1)
    top = largest_context(info, tight)
    assert 4096 <= top < info.context_length
    assert plan(info, top, tight).fits and not plan(info, top + 256, tight).fits
    assert not plan(info, 4096, MemoryAvailable(ram_total=2**20, ram_free=2**20)).fits
    gpu_all = MemoryAvailable(2**40, 2**40, vram_total=2**34, vram_free=2**34)
    assert plan(info, 4096, gpu_all).offload == "all"
    fixed = estimate(info, 4096, ubatch=OFFLOAD_UBATCH)  # offloaded: GPU-sized batches
    room = int((fixed.compute + fixed.output + fixed.weights // 2) / 0.9)
    gpu_some = MemoryAvailable(2**40, 2**40, vram_total=room, vram_free=room)
    some = plan(info, 4096, gpu_some)
    assert some.offload == "some" and 0 < some.gpu_layers < info.block_count
    # the CPU alone computes smaller batches, and its plan counts their smaller buffer
    assert some.estimate.compute == compute_bytes(info, 4096, OFFLOAD_UBATCH)
    assert plan(info, 4096, roomy).estimate.compute == compute_bytes(info, 4096, CPU_UBATCH)
    assert compute_bytes(info, 4096, CPU_UBATCH) < compute_bytes(info, 4096, OFFLOAD_UBATCH)
    gpu_tiny = MemoryAvailable(2**40, 2**40, vram_total=2**10, vram_free=2**10)
    assert plan(info, 4096, gpu_tiny).offload == "none"


def test_frognano_kv_figure() -> None:
    """The vendor's figure: 8 full-attention layers x 4 KV heads x 256 dims is 32 KiB per token in f16."""
    from dataclasses import replace

    from frogdesk.models.catalog import _size_only

    info = replace(
        _size_only(0), block_count=32, full_attention_layers=8, head_count_kv=4,
        key_length=256, value_length=256, context_length=262144,
    )  # fmt: skip
    assert info.kv_bytes_per_token_f16 == 32 * 1024
    assert estimate(info, 131072).kv_cache == 32 * 1024 * 131072  # about 4.3 GB


def test_largest_fitting_finds_the_boundary_in_steps_of_256() -> None:
    assert largest_fitting(8192, lambda ctx: ctx <= 5000) == 4864
    assert largest_fitting(8192, lambda ctx: True) == 8192
    assert largest_fitting(8000, lambda ctx: True) == 7936
    assert largest_fitting(8192, lambda ctx: ctx < 256) == 0
