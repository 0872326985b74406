"""Bad model files get a clear `ModelLoadError` before llama.cpp sees them."""

from __future__ import annotations

from pathlib import Path

import gguf
import pytest

from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.errors import ModelLoadError
from frogdesk.engine.llama.load.gguf import check_loadable
from frogdesk.engine.llama.load.options import LlamaOptions


def write_gguf(path: Path, arch: str, extra: dict[str, str] | None = None) -> Path:
    """A small GGUF with one tensor and the given architecture name."""
    import numpy as np

    writer = gguf.GGUFWriter(str(path), arch)
    for key, value in (extra or {}).items():
        writer.add_string(key, value)
    writer.add_tensor("weight", np.ones((4, 32), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def problem(path: Path) -> str:
    with pytest.raises(ModelLoadError) as info:
        check_loadable(path)
    assert str(path) in str(info.value)
    return info.value.problem


def test_missing_file(tmp_path: Path) -> None:
    assert problem(tmp_path / "nope.gguf") == "missing"


def test_not_a_gguf(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    path.write_text("<html>404 Not Found</html>")
    assert problem(path) == "not_gguf"


@pytest.mark.parametrize("keep", [30, 1000, 0.5, 0.999])
def test_truncated_gguf(qwen35_gguf: Path, tmp_path: Path, keep: float) -> None:
    data = qwen35_gguf.read_bytes()
    size = int(len(data) * keep) if isinstance(keep, float) else keep
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[:size])
    assert problem(cut) == "truncated"


def test_whole_models_pass(qwen35_gguf: Path, smollm2_gguf: Path) -> None:
    assert check_loadable(qwen35_gguf).architecture == "qwen35"
    header = check_loadable(smollm2_gguf)
    assert header.expected_size == header.file_size


def test_vision_projector_is_refused(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "mmproj-FrogNano-f16.gguf", "clip")
    assert problem(path) == "vision_projector"
    path = write_gguf(tmp_path / "proj.gguf", "qwen35", {"general.type": "mmproj"})
    assert problem(path) == "vision_projector"


def test_unknown_architecture(tmp_path: Path) -> None:
    assert problem(write_gguf(tmp_path / "x.gguf", "frogformer")) == "unsupported_architecture"


@pytest.mark.llama
def test_llama_refusing_a_known_architecture_is_a_load_error(tmp_path: Path) -> None:
    """A header that passes but lacks the tensors llama.cpp needs: its log becomes the reason."""
    path = write_gguf(tmp_path / "empty-llama.gguf", "llama")
    with pytest.raises(ModelLoadError) as info:
        LlamaBackend(path, LlamaOptions(n_ctx=256, n_threads=1))
    assert info.value.problem == "load_failed"


@pytest.mark.llama
def test_load_log_is_captured_with_buffer_sizes(qwen35_gguf: Path) -> None:
    backend = LlamaBackend(qwen35_gguf, LlamaOptions(n_ctx=512, n_threads=1))
    try:
        assert any("qwen35" in line for line in backend.load_log)
        sizes = backend.buffer_sizes()
        assert sizes.get("CPU KV", 0) > 0
        assert sizes.get("CPU RS", 0) > 0  # the recurrent state of the DeltaNet layers
        assert backend.info.context_size == 512
    finally:
        backend.close()
