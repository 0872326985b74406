"""Writes a random-weight GGUF of llama.cpp architecture `qwen35` (hybrid DeltaNet + attention).

The default shape is the tiny test model; `TinyQwen35Shape` takes any other dimensions (the
benchmarks write a FrogNano-sized one). Tensors are generated one at a time as they are written,
so memory stays near the size of the largest tensor.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import gguf
import numpy as np
import numpy.typing as npt

from tests.support.tiny_chat_template import CHAT_TEMPLATE
from tests.support.tiny_tokenizer import TOKEN_TYPE_UNUSED, build_vocabulary

ARCH = "qwen35"


@dataclass(frozen=True)
class TinyQwen35Shape:
    """Dimensions of the tiny model; every matrix row length is a multiple of 32 so it quantizes."""

    n_layer: int = 4
    full_attention_interval: int = 4
    n_embd: int = 128
    n_ff: int = 384
    n_head: int = 4
    n_head_kv: int = 2
    head_dim: int = 64
    n_rot: int = 16
    rope_sections: tuple[int, int, int, int] = (3, 3, 2, 0)
    ssm_conv_kernel: int = 4
    ssm_state_size: int = 32  # head_k_dim == head_v_dim
    ssm_group_count: int = 2  # key heads
    ssm_time_step_rank: int = 4  # value heads
    context_length: int = 8192
    rms_eps: float = 1e-6
    rope_freq_base: float = 10_000_000.0
    vocab_size: int = 0
    """Token count; 0 is the tiny vocabulary as it is, more pads it with unused tokens."""
    tied_embeddings: bool = False
    """No `output.weight`: llama.cpp reuses the token embeddings for the logits."""
    name: str = "FrogDesk tiny qwen35 test model"

    @property
    def key_dim(self) -> int:
        """Width of the DeltaNet keys (and queries) over all key heads."""
        return self.ssm_state_size * self.ssm_group_count

    @property
    def value_dim(self) -> int:
        """Width of the DeltaNet values over all value heads (the SSM inner size)."""
        return self.ssm_state_size * self.ssm_time_step_rank

    def is_full_attention(self, layer: int) -> bool:
        """Whether a layer is a full-attention layer (the rest are Gated DeltaNet)."""
        return (layer + 1) % self.full_attention_interval == 0


_CHUNK_VALUES = 1 << 24
"""Random values drawn at once for one matrix."""

_FTYPES: dict[str, tuple[npt.DTypeLike, gguf.LlamaFileType]] = {
    "f16": (np.float16, gguf.LlamaFileType.MOSTLY_F16),
    "f32": (np.float32, gguf.LlamaFileType.ALL_F32),
}


class _Weights:
    """Deterministic random tensors: matrices in the chosen float type, vectors in F32."""

    def __init__(self, seed: int, dtype: npt.DTypeLike) -> None:
        self._rng = np.random.default_rng(seed)
        self._dtype = dtype

    def matrix(self, rows: int, cols: int, scale: float) -> npt.NDArray[Any]:
        """A (rows, cols) matrix in numpy order: llama.cpp sees ne = [cols, rows].

        Drawn a block of rows at a time (the same numbers as one draw), so a large matrix
        needs no float32 copy of itself.
        """
        out = np.empty((rows, cols), dtype=self._dtype)
        step = max(1, _CHUNK_VALUES // max(cols, 1))
        for start in range(0, rows, step):
            n = min(step, rows - start)
            out[start : start + n] = self._rng.standard_normal((n, cols), dtype=np.float32) * scale
        return out

    def float32_matrix(self, rows: int, cols: int, scale: float) -> npt.NDArray[np.float32]:
        """A `matrix` in the chosen type, then widened to float32 (small tensors kept in F32)."""
        return self.matrix(rows, cols, scale).astype(np.float32)

    def decay(self, width: int) -> npt.NDArray[np.float32]:
        """-exp(A_log) with A_log uniform in [-1, 1): the negative decay rates of `ssm_a`."""
        return (-np.exp(self.uniform(width, -1.0, 1.0))).astype(np.float32)

    def norm(self, width: int) -> npt.NDArray[np.float32]:
        """An RMS-norm gain close to 1."""
        return (1.0 + 0.1 * self._rng.standard_normal(width, dtype=np.float32)).astype(np.float32)

    def uniform(self, width: int, low: float, high: float) -> npt.NDArray[np.float32]:
        """A vector drawn uniformly from [low, high)."""
        return self._rng.uniform(low, high, width).astype(np.float32)


def _add_metadata(
    writer: gguf.GGUFWriter, shape: TinyQwen35Shape, ftype: gguf.LlamaFileType
) -> None:
    writer.add_name(shape.name)
    writer.add_file_type(int(ftype))
    writer.add_context_length(shape.context_length)
    writer.add_embedding_length(shape.n_embd)
    writer.add_block_count(shape.n_layer)
    writer.add_feed_forward_length(shape.n_ff)
    writer.add_head_count(shape.n_head)
    writer.add_head_count_kv(shape.n_head_kv)
    writer.add_key_length(shape.head_dim)
    writer.add_value_length(shape.head_dim)
    writer.add_rope_dimension_count(shape.n_rot)
    writer.add_rope_dimension_sections(list(shape.rope_sections))
    writer.add_rope_freq_base(shape.rope_freq_base)
    writer.add_layer_norm_rms_eps(shape.rms_eps)
    writer.add_full_attention_interval(shape.full_attention_interval)
    writer.add_ssm_conv_kernel(shape.ssm_conv_kernel)
    writer.add_ssm_inner_size(shape.value_dim)
    writer.add_ssm_state_size(shape.ssm_state_size)
    writer.add_ssm_time_step_rank(shape.ssm_time_step_rank)
    writer.add_ssm_group_count(shape.ssm_group_count)
    writer.add_sampling_temp(0.6)
    writer.add_sampling_top_p(0.95)
    writer.add_sampling_top_k(20)


def _add_tokenizer(writer: gguf.GGUFWriter, vocab_size: int) -> int:
    vocab = build_vocabulary()
    tokens = list(vocab.tokens)
    types = list(vocab.token_types)
    if vocab_size > len(tokens):
        # Unused tokens fill the vocabulary to size: never produced by the tokenizer, and not
        # special (llama.cpp scans every special token when it tokenizes).
        tokens += [f"<|unused_{i}|>" for i in range(len(tokens), vocab_size)]
        types += [TOKEN_TYPE_UNUSED] * (vocab_size - len(types))
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen35")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(vocab.merges)
    writer.add_eos_token_id(vocab.token_id("<|im_end|>"))
    writer.add_bos_token_id(vocab.token_id("<|endoftext|>"))
    writer.add_pad_token_id(vocab.token_id("<|endoftext|>"))
    writer.add_add_bos_token(False)
    writer.add_chat_template(CHAT_TEMPLATE)
    return len(tokens)


@dataclass(frozen=True)
class _Tensor:
    """One tensor to write: its numpy shape and type, and how to draw it when its turn comes."""

    name: str
    shape: tuple[int, ...]
    dtype: npt.DTypeLike
    draw: Callable[[], npt.NDArray[Any]]


def _tensors(
    shape: TinyQwen35Shape, n_vocab: int, w: _Weights, dtype: npt.DTypeLike
) -> list[_Tensor]:
    """Every tensor in file order; drawing them in this order gives the same bytes each time."""
    d = shape.n_embd
    inv = 1.0 / np.sqrt(d)
    f32 = np.float32
    out: list[_Tensor] = []

    def matrix(name: str, rows: int, cols: int, scale: float) -> None:
        out.append(_Tensor(name, (rows, cols), dtype, lambda: w.matrix(rows, cols, scale)))

    def norm(name: str, width: int) -> None:
        out.append(_Tensor(name, (width,), f32, lambda: w.norm(width)))

    matrix("token_embd.weight", n_vocab, d, 1.0)
    norm("output_norm.weight", d)
    if not shape.tied_embeddings:
        matrix("output.weight", n_vocab, d, 2.0 * inv)
    for il in range(shape.n_layer):
        p = f"blk.{il}."
        norm(p + "attn_norm.weight", d)
        norm(p + "post_attention_norm.weight", d)
        if shape.is_full_attention(il):
            q_width = shape.head_dim * shape.n_head
            kv_width = shape.head_dim * shape.n_head_kv
            matrix(p + "attn_q.weight", 2 * q_width, d, inv)
            matrix(p + "attn_k.weight", kv_width, d, inv)
            matrix(p + "attn_v.weight", kv_width, d, inv)
            matrix(p + "attn_output.weight", d, q_width, 1.0 / np.sqrt(q_width))
            norm(p + "attn_q_norm.weight", shape.head_dim)
            norm(p + "attn_k_norm.weight", shape.head_dim)
        else:
            conv_dim = 2 * shape.key_dim + shape.value_dim
            heads = shape.ssm_time_step_rank
            kernel = shape.ssm_conv_kernel
            matrix(p + "attn_qkv.weight", conv_dim, d, inv)
            matrix(p + "attn_gate.weight", shape.value_dim, d, inv)
            conv = partial(w.float32_matrix, conv_dim, kernel, 0.5)
            out.append(_Tensor(p + "ssm_conv1d.weight", (conv_dim, kernel), f32, conv))
            out.append(_Tensor(p + "ssm_dt.bias", (heads,), f32, partial(w.uniform, heads, -1, 1)))
            # ssm_a holds -exp(A_log): negative decay rates.
            out.append(_Tensor(p + "ssm_a", (heads,), f32, partial(w.decay, heads)))
            matrix(p + "ssm_beta.weight", heads, d, inv)
            matrix(p + "ssm_alpha.weight", heads, d, inv)
            norm(p + "ssm_norm.weight", shape.ssm_state_size)
            matrix(p + "ssm_out.weight", d, shape.value_dim, 1.0 / np.sqrt(shape.value_dim))
        matrix(p + "ffn_gate.weight", shape.n_ff, d, inv)
        matrix(p + "ffn_up.weight", shape.n_ff, d, inv)
        matrix(p + "ffn_down.weight", d, shape.n_ff, 1.0 / np.sqrt(shape.n_ff))
    return out


def write_tiny_qwen35(
    path: Path,
    *,
    seed: int = 0,
    ftype: str = "f16",
    shape: TinyQwen35Shape | None = None,
) -> Path:
    """Write a qwen35 GGUF of `shape` (the tiny one by default) to path and return it.

    The same seed, ftype and shape give the same bytes.
    """
    if ftype not in _FTYPES:
        raise ValueError(f"ftype must be one of {sorted(_FTYPES)}, not {ftype!r}")
    dtype, file_type = _FTYPES[ftype]
    shape = shape or TinyQwen35Shape()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(str(path), ARCH)
    _add_metadata(writer, shape, file_type)
    n_vocab = _add_tokenizer(writer, shape.vocab_size)
    tensors = _tensors(shape, n_vocab, _Weights(seed, dtype), dtype)
    for t in tensors:
        nbytes = int(np.prod(t.shape)) * np.dtype(t.dtype).itemsize
        writer.add_tensor_info(t.name, t.shape, np.dtype(t.dtype), nbytes)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for t in tensors:
        writer.write_tensor_data(t.draw())
    writer.close()
    return path


def main(argv: list[str] | None = None) -> int:
    """Command line: write the tiny model to the given path."""
    parser = argparse.ArgumentParser(description="Write a tiny random-weight qwen35 GGUF.")
    parser.add_argument("out", type=Path, help="output .gguf path")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--ftype", choices=sorted(_FTYPES), default="f16", help="weight type")
    args = parser.parse_args(argv)
    out = write_tiny_qwen35(args.out, seed=args.seed, ftype=args.ftype)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
