"""A random-weight `qwen35` GGUF with FrogNano's dimensions, Q4_K_M, generated on first use.

Random weights decode and prefill at the same speed as trained ones and take the same
memory; they predict nothing. The vocabulary is the tiny test tokenizer padded with unused
tokens to Qwen3.5's 248,320 (the real tokenizer is not available offline): the embedding and
output matrices have the real size, tokenization does not behave like the real one. The
token embeddings are tied to the output, as in the Qwen3.5 small models.

The file is cached under the given folder and never committed; the F16 it is quantized from
is deleted once the quant exists.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from tests.support.quantize import quantize
from tests.support.tiny_qwen35 import TinyQwen35Shape, write_tiny_qwen35

FROGNANO_SHAPE = TinyQwen35Shape(
    n_layer=32,
    full_attention_interval=4,
    n_embd=2560,
    n_ff=9216,
    n_head=16,
    n_head_kv=4,
    head_dim=256,
    n_rot=64,
    rope_sections=(11, 11, 10, 0),
    ssm_conv_kernel=4,
    ssm_state_size=128,
    ssm_group_count=16,
    ssm_time_step_rank=32,
    context_length=262144,
    vocab_size=248320,
    tied_embeddings=True,
    name="FrogDesk FrogNano-shaped random model",
)
"""32 layers (every 4th full attention), hidden 2560, FFN 9216, 16 query heads and 4 KV heads
of 256, DeltaNet with 16 key heads and 32 value heads of 128, conv kernel 4."""

BLOCK_SHAPE = replace(
    FROGNANO_SHAPE,
    n_layer=4,
    vocab_size=0,
    name="FrogDesk FrogNano-shaped block",
)
"""One repeating block of FROGNANO_SHAPE (three DeltaNet layers, one full-attention layer) and
the tiny vocabulary: what attention settings change per token, without the 32 layers and the
248,320-row output that take most of the full model's time (for measuring at depth quickly)."""

DEFAULT_CACHE = Path(tempfile.gettempdir()) / "frogdesk-bench"
FILE_NAME = "frognano-shaped-Q4_K_M.gguf"
BLOCK_FILE_NAME = "frognano-block-Q4_K_M.gguf"


def shaped_model(cache_dir: Path = DEFAULT_CACHE, *, threads: int = 2, block: bool = False) -> Path:
    """The Q4_K_M file under `cache_dir`, written (about 8 GB of F16 on the way) if missing;
    `block`: the one-block model (BLOCK_SHAPE, about 0.2 GB)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    out = cache_dir / (BLOCK_FILE_NAME if block else FILE_NAME)
    if out.is_file():
        return out
    f16 = out.with_name(out.name.replace("Q4_K_M", "F16") + ".partial")
    partial = out.with_suffix(".gguf.partial")
    try:
        write_tiny_qwen35(f16, shape=BLOCK_SHAPE if block else FROGNANO_SHAPE, ftype="f16")
        quantize(f16, partial, "Q4_K_M", threads=threads)
    finally:
        f16.unlink(missing_ok=True)
    partial.replace(out)
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line: make sure the shaped model exists and print its path."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--block", action="store_true", help="the one-block model")
    args = parser.parse_args(argv)
    print(shaped_model(args.cache_dir, threads=args.threads, block=args.block))
    return 0


if __name__ == "__main__":
    sys.exit(main())
