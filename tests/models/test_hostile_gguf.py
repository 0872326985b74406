"""A GGUF's header is outside input: whatever it claims, reading it ends soon with one clear
error, and a listing of models goes on past it."""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from frogdesk.engine.llama.errors import ModelLoadError
from frogdesk.engine.llama.load.gguf import check_loadable
from frogdesk.models.errors import ModelError
from frogdesk.models.gguf_info import inspect_gguf, split_parts
from tests.support.raw_gguf import gguf, kv_f32_array, kv_str, kv_u32, kv_u64, tensor


def _inspect_soon(path: Path, seconds: float = 20.0) -> object:
    """inspect_gguf's result or error, failing the test if it does not end in time."""
    outcome: list[object] = []

    def work() -> None:
        try:
            outcome.append(inspect_gguf(path))
        except Exception as exc:  # what it raised is the outcome
            outcome.append(exc)

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(seconds)
    assert outcome, f"inspect_gguf({path.name}) still running after {seconds} s"
    return outcome[0]


def _model(tmp_path: Path, name: str, kvs: Sequence[bytes], tensors: Sequence[bytes] = ()) -> Path:
    path = tmp_path / name
    path.write_bytes(gguf([kv_str("general.architecture", "llama"), *kvs], tensors))
    return path


def test_a_header_claiming_two_to_the_forty_layers_is_refused_at_once(tmp_path: Path) -> None:
    for extra in ([], [kv_u32("llama.full_attention_interval", 4)]):
        path = _model(tmp_path, "layers.gguf", [kv_u64("llama.block_count", 2**40), *extra])
        outcome = _inspect_soon(path)
        assert isinstance(outcome, ModelError)
        assert "claims 1099511627776 layers" in str(outcome)
    # The control: an ordinary layer count reads.
    ordinary = _model(tmp_path, "ok.gguf", [kv_u64("llama.block_count", 32)])
    info = _inspect_soon(ordinary)
    assert not isinstance(info, Exception) and info.block_count == 32  # type: ignore[attr-defined]


def test_values_that_are_no_numbers_or_no_text_read_as_absent(tmp_path: Path) -> None:
    path = _model(
        tmp_path,
        "odd.gguf",
        [
            kv_u64("llama.block_count", 4),
            kv_f32_array("llama.attention.head_count_kv", [math.nan, math.inf, 1.0, 2.0]),
            kv_str("general.name", b"caf\xe9 \xff"),
        ],
    )
    info = _inspect_soon(path)
    assert not isinstance(info, Exception), info
    assert info.name == "" and info.block_count == 4  # type: ignore[attr-defined]


def test_a_tensor_with_hundreds_of_dimensions_is_a_clear_load_error(tmp_path: Path) -> None:
    path = _model(tmp_path, "dims.gguf", [], [tensor("w", [2**64 - 1] * 300)])
    with pytest.raises(ModelLoadError, match="300 dimensions; GGUF allows 4"):
        check_loadable(path)
    assert isinstance(_inspect_soon(path), ModelError)


def test_a_split_name_that_counts_no_parts_is_a_plain_file(tmp_path: Path) -> None:
    path = _model(tmp_path, "Model-Q4_K_M-00001-of-00000.gguf", [kv_u64("llama.block_count", 2)])
    assert split_parts(path) == (path,)
    info = _inspect_soon(path)
    assert not isinstance(info, Exception), info
    real = tmp_path / "Model-Q4_K_M-00001-of-00002.gguf"
    assert len(split_parts(real)) == 2  # the control: a real split still has its parts
