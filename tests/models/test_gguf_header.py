"""The one GGUF header reader: the same numbers as the `gguf` package's reader on real files,
and a header built to exhaust memory costs it nothing (the `gguf` reader is the control)."""

from __future__ import annotations

import struct
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from frogdesk.engine.template import load_gguf_template
from frogdesk.models.gguf_header import HeaderCorrupt, HeaderTruncated, read_header
from frogdesk.models.gguf_info import inspect_gguf
from tests.support.raw_gguf import ARRAY, STRING, gguf, kv_str, kv_u64, text


def _reference(path: Path) -> dict[str, object]:
    """What the `gguf` package's own reader says of the file."""
    from gguf import GGUFReader

    reader = GGUFReader(path)
    layers: dict[int, int] = {}
    for t in reader.tensors:
        if t.name.startswith("blk."):
            index = int(t.name.split(".")[1])
            layers[index] = layers.get(index, 0) + int(t.n_bytes)
    tokens = reader.fields["tokenizer.ggml.tokens"]
    return {
        "parameters": sum(int(t.n_elements) for t in reader.tensors),
        "tensor_bytes": sum(int(t.n_bytes) for t in reader.tensors),
        "layers": layers,
        "tokens": len(tokens.data),
        "template": reader.fields["tokenizer.chat_template"].contents(),
    }


@pytest.mark.parametrize("fixture", ["smollm2_gguf", "qwen35_gguf"])
def test_a_real_file_reads_as_the_gguf_package_reads_it(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    path: Path = request.getfixturevalue(fixture)
    expected = _reference(path)
    info = inspect_gguf(path)
    assert info.parameters == expected["parameters"]
    assert info.tensor_bytes == expected["tensor_bytes"]
    layers = expected["layers"]
    assert isinstance(layers, dict)
    assert info.layer_bytes == tuple(layers.get(i, 0) for i in range(info.block_count))
    header = read_header(path)
    assert header.metadata["tokenizer.ggml.tokens"] == expected["tokens"]
    assert load_gguf_template(path).source == expected["template"]


def _strings_file(tmp_path: Path, count: int) -> Path:
    items = b"".join(text("t") for _ in range(count))
    array = text("tokenizer.ggml.tokens") + struct.pack("<IIQ", ARRAY, STRING, count) + items
    path = tmp_path / "strings.gguf"
    kvs = [kv_str("general.architecture", "llama"), kv_u64("llama.block_count", 2), array]
    path.write_bytes(gguf(kvs))
    return path


def _peak(work: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_long_string_array_costs_no_memory(tmp_path: Path) -> None:
    from gguf import GGUFReader

    path = _strings_file(tmp_path, 10_000)
    ours = _peak(lambda: inspect_gguf(path))
    # The control: the gguf package's reader holds objects per item of the same array.
    theirs = _peak(lambda: GGUFReader(path))
    assert theirs > 5 * 2**20, theirs
    assert ours < 2**20 and ours * 20 < theirs, (ours, theirs)


def test_counts_no_model_has_are_refused_before_any_loop(tmp_path: Path) -> None:
    tensors = tmp_path / "tensors.gguf"
    tensors.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 2**40, 0))
    with pytest.raises(HeaderCorrupt, match="claims 1,099,511,627,776 tensors"):
        read_header(tensors)
    keys = tmp_path / "keys.gguf"
    keys.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 2**40))
    with pytest.raises(HeaderCorrupt, match="metadata keys"):
        read_header(keys)
    strings = tmp_path / "claims.gguf"
    array = text("tokenizer.ggml.tokens") + struct.pack("<IIQ", ARRAY, STRING, 2**60)
    strings.write_bytes(gguf([array]))
    with pytest.raises(HeaderTruncated):
        read_header(strings)
    # The control: the same shapes with counts a model has read fine.
    fine = tmp_path / "fine.gguf"
    fine.write_bytes(gguf([kv_str("general.architecture", "llama")]))
    assert read_header(fine).architecture == "llama"
