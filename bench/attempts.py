"""Benchmark: N attempts as N sequences of one llama context against one at a time; prints JSON.

- `aggregate_ratio[N]`: FrogDesk's aggregate decode rate with N attempts in shared batches
  over its rate with one (N = 2, 3, 4).
- `vs_raw`: FrogDesk's aggregate decode rate at N = 3 over a plain batched decode loop
  written on llama.cpp's low-level API (same model, context, prefix and token counts).
- `batched_vs_sequential`: wall time of 3 attempts batched over the same 3 attempts one
  after another on the single-sequence backend (same tokens: greedy, same prompt).
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import llama_cpp

from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.context import LlamaContext
from frogdesk.engine.llama.model import LlamaModel
from frogdesk.engine.llama.options import LlamaOptions
from frogdesk.engine.llama.shared import SharedLlama
from frogdesk.engine.template import ChatTemplate
from frogdesk.engine.types import Finished, GenerationSettings, Message, Usage
from frogdesk.leaf.schemas import SYSTEM_PROMPT, tool_schemas

TASK = "The test tests/test_calc.py::test_divide fails with ZeroDivisionError. Fix calc.py."
OPENING = [Message("system", SYSTEM_PROMPT), Message("user", TASK)]


def settings(tokens: int) -> GenerationSettings:
    """Greedy, a fixed cap, no tool grammar (every attempt samples the same way)."""
    return GenerationSettings(temperature=0.0, max_tokens=tokens, seed=1, tool_choice="none")


def ours(model: Path, n: int, tokens: int, options: LlamaOptions) -> dict[str, Any]:
    """N attempts on one shared context: the opening once, then decode in shared batches."""
    shared = SharedLlama(model, n, options)
    try:
        shared.share_prefix(shared.backends[0], OPENING, tool_schemas(), True)
        done: dict[int, tuple[int, float]] = {}

        def attempt(i: int) -> None:
            events = list(shared.backends[i].generate(OPENING, tool_schemas(), settings(tokens)))
            usage = next(e for e in events if isinstance(e, Usage))
            finished = next(e for e in events if isinstance(e, Finished))
            done[i] = (len(finished.raw_tokens), usage.decode_seconds)

        started = time.perf_counter()
        threads = [threading.Thread(target=attempt, args=(i,)) for i in range(n)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - started
        generated = sum(count for count, _ in done.values())
        return {
            "n": n,
            "tokens": generated,
            "wall_s": wall,
            "aggregate_tok_s": generated / wall,
            "batches": shared.stats.batches,
            "widest": shared.stats.widest,
        }
    finally:
        shared.close()


def raw(model_path: Path, n: int, tokens: int, options: LlamaOptions) -> dict[str, Any]:
    """The reference: prefix on sequence 0, copied, then n greedy tokens per step, one batch."""
    model = LlamaModel(model_path, options)
    context = LlamaContext(model, replace(options, n_ctx=options.n_ctx * n), n)
    try:
        template = ChatTemplate(model.chat_template() or "")
        text = template.render(OPENING, tool_schemas(), add_generation_prompt=True)
        prompt = model.tokenize(text, add_special=model.add_bos)
        handle = context.handle
        mem = llama_cpp.llama_get_memory(handle)
        context.decode(prompt, 0)
        for seq in range(1, n):
            llama_cpp.llama_memory_seq_cp(mem, 0, seq, -1, -1)
        greedy = [llama_cpp.llama_sampler_init_greedy() for _ in range(n)]
        batch = llama_cpp.llama_batch_init(n, 0, 1)
        last = [-1] * n
        started = time.perf_counter()
        position = len(prompt)
        rows = [-1] * n
        for step in range(tokens):
            for seq in range(n):
                token = llama_cpp.llama_sampler_sample(greedy[seq], handle, rows[seq])
                last[seq] = token
            if step == tokens - 1:
                break
            for seq in range(n):
                batch.token[seq] = last[seq]
                batch.pos[seq] = position
                batch.n_seq_id[seq] = 1
                batch.seq_id[seq][0] = seq
                batch.logits[seq] = True
                rows[seq] = seq
            batch.n_tokens = n
            if llama_cpp.llama_decode(handle, batch) != 0:
                raise RuntimeError("llama_decode failed")
            position += 1
        wall = time.perf_counter() - started
        llama_cpp.llama_batch_free(batch)
        for sampler in greedy:
            llama_cpp.llama_sampler_free(sampler)
        return {"n": n, "tokens": n * tokens, "wall_s": wall, "aggregate_tok_s": n * tokens / wall}
    finally:
        context.close()
        model.close()


def sequential(model: Path, n: int, tokens: int, options: LlamaOptions) -> dict[str, Any]:
    """The same n attempts one after another on the single-sequence backend (no drafting,
    as in the shared context: the same decode path, one token per step)."""
    backend = LlamaBackend(model, replace(options, speculative=False))
    try:
        backend.prefill(OPENING, tool_schemas())
        generated = 0
        started = time.perf_counter()
        for _ in range(n):
            events = list(backend.generate(OPENING, tool_schemas(), settings(tokens)))
            generated += len(next(e for e in events if isinstance(e, Finished)).raw_tokens)
        wall = time.perf_counter() - started
        return {"n": n, "tokens": generated, "wall_s": wall}
    finally:
        backend.close()


def main(argv: list[str] | None = None) -> int:
    """Run the measurements and print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--tokens", type=int, default=64, help="tokens each attempt generates")
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--n-ctx", type=int, default=2048, help="context per attempt")
    parser.add_argument("--json", action="store_true", help="JSON only (the default output)")
    args = parser.parse_args(argv)
    options = LlamaOptions(n_ctx=args.n_ctx, n_threads=args.threads)
    runs = {n: ours(args.model, n, args.tokens, options) for n in (1, 2, 3, 4)}
    base = runs[1]["aggregate_tok_s"]
    reference = raw(args.model, 3, args.tokens, options)
    one_by_one = sequential(args.model, 3, args.tokens, options)
    report = {
        "model": str(args.model),
        "tokens_per_attempt": args.tokens,
        "threads": options.threads,
        "aggregate_tok_s": {str(n): r["aggregate_tok_s"] for n, r in runs.items()},
        "aggregate_ratio": {str(n): runs[n]["aggregate_tok_s"] / base for n in (2, 3, 4)},
        "raw_aggregate_tok_s_3": reference["aggregate_tok_s"],
        "vs_raw": runs[3]["aggregate_tok_s"] / reference["aggregate_tok_s"],
        "batched_wall_s_3": runs[3]["wall_s"],
        "sequential_wall_s_3": one_by_one["wall_s"],
        "batched_vs_sequential": runs[3]["wall_s"] / one_by_one["wall_s"],
        "tokens": {"batched_3": runs[3]["tokens"], "sequential_3": one_by_one["tokens"]},
        "runs": runs,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
