"""Fixtures of the models tests: the test quants under realistic names and a running stand-in Hub."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.models.hub_server import HubRepo, HubState, RunningHub, bartowski_layout, serve_hub

REPO = "bartowski/microsoft_FrogNano-4B-2609-GGUF"
PREFIX = "microsoft_FrogNano-4B-2609"


@pytest.fixture(scope="session")
def model_quants(qwen35_quants: dict[str, Path]) -> dict[str, Path]:
    """The tiny qwen35 model in F16, Q8_0, Q4_0, plus Q4_K_M and Q2_K made here."""
    from tests.support.quantize import quantize

    out = dict(qwen35_quants)
    f16 = qwen35_quants["F16"]
    for name in ("Q4_K_M", "Q2_K"):
        out[name] = quantize(f16, f16.with_name(f"tiny-qwen35-{name}.gguf"), name)
    return out


@pytest.fixture(scope="session")
def split_q8(model_quants: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The tiny model's Q8_0 as a real two-part split GGUF."""
    from tests.models.split_gguf import write_split

    folder = tmp_path_factory.mktemp("split")
    return write_split(model_quants["Q8_0"], folder / "tiny-qwen35-Q8_0.gguf", max_tensors=30)


@pytest.fixture
def hub(
    model_quants: dict[str, Path],
    split_q8: list[Path],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> Iterator[RunningHub]:
    """A stand-in Hub serving REPO; HF offline mode is lifted for the test."""
    import huggingface_hub.constants

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-home" / "hub"))
    state = HubState(repos={REPO: HubRepo(bartowski_layout(model_quants, split_q8, PREFIX))})
    with serve_hub(state) as running:
        yield running
