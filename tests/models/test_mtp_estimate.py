"""The memory estimate counts the MTP draft context: its KV cache, compute and output buffers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from frogdesk import cli
from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.load.log import buffer_sizes
from frogdesk.engine.llama.load.model import LlamaModel
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.llama.speculative.mtp import MtpDrafter
from frogdesk.models.gguf_info import inspect_gguf
from frogdesk.models.memory import drafts_with_mtp, estimate, nextn_bytes

MIB = 2**20
TOLERANCE = 0.05
"""The estimate against the sum of llama.cpp's buffers (as for a model whose weights are repacked)."""


@dataclass(frozen=True)
class Allocated:
    """llama.cpp's buffers (MiB by name) for the model, the target context and the MTP context."""

    model: dict[str, float]
    target: dict[str, float]
    mtp: dict[str, float]

    @property
    def total(self) -> float:
        return sum(self.model.values()) + sum(self.target.values()) + sum(self.mtp.values())


def allocated(path: Path, options: LlamaOptions) -> Allocated:
    """Load `path` as FrogDesk does with drafting on, reading each step's buffers from the log."""
    model = LlamaModel(path, options, load_mtp=True)
    try:
        weights = buffer_sizes(model.log.lines)
        mark = model.log.mark()
        context = LlamaContext(model, options)
        try:
            target = buffer_sizes(model.log.since(mark))
            mark = model.log.mark()
            drafter = MtpDrafter(model, context, options)
            try:
                mtp = buffer_sizes(model.log.since(mark))
            finally:
                drafter.close()
        finally:
            context.close()
    finally:
        model.close()
    return Allocated(weights, target, mtp)


@pytest.fixture(params=[(2048, True), (8192, False)], ids=["2k-mapped", "8k-read"])
def loaded(
    request: pytest.FixtureRequest, mtp_gguf: Path
) -> Iterator[tuple[LlamaOptions, Allocated]]:
    n_ctx, use_mmap = request.param
    options = replace(LlamaOptions(), n_ctx=n_ctx, n_threads=2, use_mmap=use_mmap)
    yield options, allocated(mtp_gguf, options)


@pytest.mark.llama
def test_the_estimate_counts_the_mtp_context_as_llama_cpp_allocates_it(
    mtp_gguf: Path, loaded: tuple[LlamaOptions, Allocated]
) -> None:
    options, alloc = loaded
    info = inspect_gguf(mtp_gguf)
    assert drafts_with_mtp(info)
    est = estimate(
        info, options.n_ctx, options.kv_cache_type, options.ubatch, options.flash_attn,
        use_mmap=options.use_mmap, n_batch=options.n_batch,
    )  # fmt: skip
    kv = sum(v for k, v in alloc.mtp.items() if k.endswith(" KV"))
    assert kv > 0, f"the MTP context has a KV cache of its own: {alloc.mtp}"
    assert est.mtp_kv_cache / MIB == pytest.approx(kv, abs=0.01)
    rest = sum(v for k, v in alloc.mtp.items() if not k.endswith(" KV"))
    assert est.mtp_compute / MIB == pytest.approx(rest, rel=TOLERANCE)
    error = est.total / MIB / alloc.total - 1
    print(f"n_ctx={options.n_ctx}: estimate {est.total / MIB:.2f} MiB, llama.cpp "
          f"{alloc.total:.2f} MiB ({error:+.1%}); MTP {alloc.mtp}")  # fmt: skip
    assert abs(error) < TOLERANCE
    # control: the drafting share of the estimate is the MTP context's buffers and the NextN
    # weights llama.cpp loads for it; without that share the estimate misses
    without = estimate(
        info, options.n_ctx, options.kv_cache_type, options.ubatch, options.flash_attn,
        use_mmap=options.use_mmap, drafting=False,
    )  # fmt: skip
    share = (est.total - without.total) / MIB
    expected = sum(alloc.mtp.values()) + nextn_bytes(info) / MIB
    assert share == pytest.approx(expected, rel=TOLERANCE)
    assert abs(without.total / MIB / alloc.total - 1) > TOLERANCE


@pytest.mark.llama
@pytest.mark.parametrize("use_mmap", [True, False])
def test_the_nextn_weights_are_counted_only_when_loaded(mtp_gguf: Path, use_mmap: bool) -> None:
    """llama.cpp skips the NextN tensors when the MTP head is not asked for, mapped or read."""
    info = inspect_gguf(mtp_gguf)
    assert nextn_bytes(info) > 0
    options = replace(LlamaOptions(), n_ctx=2048, n_threads=2, use_mmap=use_mmap)
    for drafting in (True, False):
        model = LlamaModel(mtp_gguf, options, load_mtp=drafting)
        try:
            loaded = sum(buffer_sizes(model.log.lines).values())
        finally:
            model.close()
        est = estimate(info, 2048, use_mmap=use_mmap, drafting=drafting)
        assert est.weights / MIB == pytest.approx(loaded, abs=0.01)
        # control: the other choice's figure does not match this load
        other = estimate(info, 2048, use_mmap=use_mmap, drafting=not drafting)
        assert other.weights / MIB != pytest.approx(loaded, abs=0.01)


def test_models_info_says_whether_the_mtp_context_is_counted(
    mtp_gguf: Path, qwen35_gguf: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def info(path: Path, *flags: str) -> dict[str, object]:
        assert cli.main([*flags, "models", "info", str(path), "--json", "--context", "2048"]) == 0
        out: dict[str, object] = json.loads(capsys.readouterr().out)
        return out

    on = info(mtp_gguf)
    assert on["load"]["mtp"] is True  # type: ignore[index]
    assert on["estimate"]["mtp_kv_cache"] > 0 and on["estimate"]["mtp_compute"] > 0  # type: ignore[index]
    config = tmp_path / "config.toml"
    config.write_text("speculative = false\n", encoding="utf-8")
    off = info(mtp_gguf, "--config", str(config))
    assert off["load"]["mtp"] is False  # type: ignore[index]
    assert off["estimate"]["mtp_kv_cache"] == off["estimate"]["mtp_compute"] == 0  # type: ignore[index]
    assert on["estimate"]["total"] > off["estimate"]["total"]  # type: ignore[index,operator]
    plain = info(qwen35_gguf)  # no MTP head in the file
    assert plain["load"]["mtp"] is False  # type: ignore[index]
    assert plain["estimate"]["mtp_kv_cache"] == 0  # type: ignore[index]
