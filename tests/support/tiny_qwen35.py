"""Writes a tiny random-weight GGUF of llama.cpp architecture `qwen35` (hybrid DeltaNet + attention)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gguf
import numpy as np
import numpy.typing as npt

from tests.support.tiny_chat_template import CHAT_TEMPLATE
from tests.support.tiny_tokenizer import build_vocabulary

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
        """A (rows, cols) matrix in numpy order: llama.cpp sees ne = [cols, rows]."""
        data = self._rng.standard_normal((rows, cols), dtype=np.float32) * scale
        return data.astype(self._dtype)

    def norm(self, width: int) -> npt.NDArray[np.float32]:
        """An RMS-norm gain close to 1."""
        return (1.0 + 0.1 * self._rng.standard_normal(width, dtype=np.float32)).astype(np.float32)

    def uniform(self, width: int, low: float, high: float) -> npt.NDArray[np.float32]:
        """A vector drawn uniformly from [low, high)."""
        return self._rng.uniform(low, high, width).astype(np.float32)


def _add_metadata(
    writer: gguf.GGUFWriter, shape: TinyQwen35Shape, ftype: gguf.LlamaFileType
) -> None:
    writer.add_name("FrogDesk tiny qwen35 test model")
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


def _add_tokenizer(writer: gguf.GGUFWriter) -> int:
    vocab = build_vocabulary()
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen35")
    writer.add_token_list(vocab.tokens)
    writer.add_token_types(vocab.token_types)
    writer.add_token_merges(vocab.merges)
    writer.add_eos_token_id(vocab.token_id("<|im_end|>"))
    writer.add_bos_token_id(vocab.token_id("<|endoftext|>"))
    writer.add_pad_token_id(vocab.token_id("<|endoftext|>"))
    writer.add_add_bos_token(False)
    writer.add_chat_template(CHAT_TEMPLATE)
    return len(vocab.tokens)


def _add_tensors(
    writer: gguf.GGUFWriter, shape: TinyQwen35Shape, n_vocab: int, w: _Weights
) -> None:
    d = shape.n_embd
    inv = 1.0 / np.sqrt(d)
    writer.add_tensor("token_embd.weight", w.matrix(n_vocab, d, 1.0))
    writer.add_tensor("output_norm.weight", w.norm(d))
    writer.add_tensor("output.weight", w.matrix(n_vocab, d, 2.0 * inv))
    for il in range(shape.n_layer):
        p = f"blk.{il}."
        writer.add_tensor(p + "attn_norm.weight", w.norm(d))
        writer.add_tensor(p + "post_attention_norm.weight", w.norm(d))
        if shape.is_full_attention(il):
            q_width = shape.head_dim * shape.n_head
            kv_width = shape.head_dim * shape.n_head_kv
            writer.add_tensor(p + "attn_q.weight", w.matrix(2 * q_width, d, inv))
            writer.add_tensor(p + "attn_k.weight", w.matrix(kv_width, d, inv))
            writer.add_tensor(p + "attn_v.weight", w.matrix(kv_width, d, inv))
            writer.add_tensor(
                p + "attn_output.weight", w.matrix(d, q_width, 1.0 / np.sqrt(q_width))
            )
            writer.add_tensor(p + "attn_q_norm.weight", w.norm(shape.head_dim))
            writer.add_tensor(p + "attn_k_norm.weight", w.norm(shape.head_dim))
        else:
            conv_dim = 2 * shape.key_dim + shape.value_dim
            heads = shape.ssm_time_step_rank
            writer.add_tensor(p + "attn_qkv.weight", w.matrix(conv_dim, d, inv))
            writer.add_tensor(p + "attn_gate.weight", w.matrix(shape.value_dim, d, inv))
            conv = w.matrix(conv_dim, shape.ssm_conv_kernel, 0.5).astype(np.float32)
            writer.add_tensor(p + "ssm_conv1d.weight", conv)
            writer.add_tensor(p + "ssm_dt.bias", w.uniform(heads, -1.0, 1.0))
            # ssm_a holds -exp(A_log): negative decay rates.
            writer.add_tensor(p + "ssm_a", -np.exp(w.uniform(heads, -1.0, 1.0)))
            writer.add_tensor(p + "ssm_beta.weight", w.matrix(heads, d, inv))
            writer.add_tensor(p + "ssm_alpha.weight", w.matrix(heads, d, inv))
            writer.add_tensor(p + "ssm_norm.weight", w.norm(shape.ssm_state_size))
            writer.add_tensor(
                p + "ssm_out.weight", w.matrix(d, shape.value_dim, 1.0 / np.sqrt(shape.value_dim))
            )
        writer.add_tensor(p + "ffn_gate.weight", w.matrix(shape.n_ff, d, inv))
        writer.add_tensor(p + "ffn_up.weight", w.matrix(shape.n_ff, d, inv))
        writer.add_tensor(p + "ffn_down.weight", w.matrix(d, shape.n_ff, 1.0 / np.sqrt(shape.n_ff)))


def write_tiny_qwen35(path: Path, *, seed: int = 0, ftype: str = "f16") -> Path:
    """Write the tiny qwen35 GGUF to path (same seed and ftype give the same bytes) and return it."""
    if ftype not in _FTYPES:
        raise ValueError(f"ftype must be one of {sorted(_FTYPES)}, not {ftype!r}")
    dtype, file_type = _FTYPES[ftype]
    shape = TinyQwen35Shape()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(str(path), ARCH)
    _add_metadata(writer, shape, file_type)
    n_vocab = _add_tokenizer(writer)
    _add_tensors(writer, shape, n_vocab, _Weights(seed, dtype))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
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
