"""Writes a `qwen35` GGUF (the tiny one by default) with one multi-token-prediction (NextN) block.

The trunk is exactly tests/support/tiny_qwen35.py's model of the same shape and seed (same
bytes per tensor); the file adds
`qwen35.nextn_predict_layers = 1`, counts the extra block in `qwen35.block_count`, and holds
the block's tensors under `blk.{n_layer}.`: a full-attention decoder block (the layout of the
trunk's attention layers) plus `nextn.eh_proj`, `nextn.enorm`, `nextn.hnorm` and
`nextn.shared_head_norm`. The NextN token embeddings and LM head are left out, as llama.cpp
allows: the draft head then shares the trunk's `token_embd` and `output`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import gguf
import numpy as np
import numpy.typing as npt

from tests.support.tiny_qwen35 import ARCH, TinyQwen35Shape, write_tiny_qwen35

BLOCK_COUNT_KEY = gguf.Keys.LLM.BLOCK_COUNT.format(arch=ARCH)
NEXTN_KEY = gguf.Keys.LLM.NEXTN_PREDICT_LAYERS.format(arch=ARCH)


def _nextn_tensors(
    shape: TinyQwen35Shape, dtype: npt.DTypeLike, seed: int
) -> dict[str, npt.NDArray[Any]]:
    """The NextN block's tensors by GGUF name (matrices in `dtype`, norms in F32)."""
    rng = np.random.default_rng(seed + 1_000_003)
    d = shape.n_embd
    q_width = shape.head_dim * shape.n_head
    kv_width = shape.head_dim * shape.n_head_kv

    def matrix(rows: int, cols: int) -> npt.NDArray[Any]:
        data = rng.standard_normal((rows, cols), dtype=np.float32) / np.sqrt(cols)
        out: npt.NDArray[Any] = data.astype(dtype)
        return out

    def norm(width: int) -> npt.NDArray[np.float32]:
        return (1.0 + 0.1 * rng.standard_normal(width, dtype=np.float32)).astype(np.float32)

    p = f"blk.{shape.n_layer}."
    return {
        p + "attn_norm.weight": norm(d),
        p + "post_attention_norm.weight": norm(d),
        p + "attn_q.weight": matrix(2 * q_width, d),  # queries and their output gate
        p + "attn_k.weight": matrix(kv_width, d),
        p + "attn_v.weight": matrix(kv_width, d),
        p + "attn_output.weight": matrix(d, q_width),
        p + "attn_q_norm.weight": norm(shape.head_dim),
        p + "attn_k_norm.weight": norm(shape.head_dim),
        p + "ffn_gate.weight": matrix(shape.n_ff, d),
        p + "ffn_up.weight": matrix(shape.n_ff, d),
        p + "ffn_down.weight": matrix(d, shape.n_ff),
        # llama.cpp's ne = [2 * n_embd, n_embd]: the embedding and hidden state, concatenated.
        p + "nextn.eh_proj.weight": matrix(d, 2 * d),
        p + "nextn.enorm.weight": norm(d),
        p + "nextn.hnorm.weight": norm(d),
        p + "nextn.shared_head_norm.weight": norm(d),
    }


def write_tiny_qwen35_mtp(
    path: Path,
    *,
    seed: int = 0,
    ftype: str = "f16",
    shape: TinyQwen35Shape | None = None,
) -> Path:
    """Write the qwen35 GGUF of `shape` (the tiny one by default) with a NextN block to path.

    Deterministic for the same arguments. Tensors are copied one at a time from the trunk
    written first (in a scratch folder next to `path`), so a large shape needs little memory.
    """
    shape = shape or TinyQwen35Shape()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="qwen35-trunk-", dir=path.parent) as scratch:
        trunk = write_tiny_qwen35(Path(scratch) / "trunk.gguf", seed=seed, ftype=ftype, shape=shape)
        reader = gguf.GGUFReader(trunk)
        writer = gguf.GGUFWriter(str(path), ARCH)
        for field in reader.fields.values():
            if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
                continue  # written by GGUFWriter itself
            value = field.contents()
            if field.name == BLOCK_COUNT_KEY:
                value = int(value) + 1
            kind = field.types[0]
            sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
            writer.add_key_value(field.name, value, kind, sub_type=sub)
        writer.add_nextn_predict_layers(1)
        dtype: npt.DTypeLike = np.float16
        for tensor in reader.tensors:
            if tensor.name == "token_embd.weight":
                dtype = tensor.data.dtype
            writer.add_tensor_info(
                tensor.name, tensor.data.shape, tensor.data.dtype, tensor.data.nbytes
            )
        extra = _nextn_tensors(shape, dtype, seed)
        for name, data in extra.items():
            writer.add_tensor_info(name, data.shape, data.dtype, data.nbytes)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_ti_data_to_file()
        for tensor in reader.tensors:
            writer.write_tensor_data(tensor.data)
        for data in extra.values():
            writer.write_tensor_data(data)
        writer.close()
    return path


def main(argv: list[str] | None = None) -> int:
    """Command line: write the tiny model with its NextN block to the given path."""
    parser = argparse.ArgumentParser(description="Write a tiny qwen35 GGUF with a NextN block.")
    parser.add_argument("out", type=Path, help="output .gguf path")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--ftype", choices=("f16", "f32"), default="f16", help="weight type")
    args = parser.parse_args(argv)
    print(write_tiny_qwen35_mtp(args.out, seed=args.seed, ftype=args.ftype))
    return 0


if __name__ == "__main__":
    sys.exit(main())
