"""Benchmark: what verifying a draft costs, one decode step of 1 + k tokens against one token; JSON.

Speculative decoding pays when the tokens a verification step accepts outnumber what the
step costs in one-token steps. This measures that cost on a model (by default the
FrogNano-shaped random-weight Q4_K_M, tests/support/frognano_shape.py, generated on first
use): after a prompt of `--depth` tokens, single decode steps of 1, 1 + 8 and 1 + 16 tokens
with logits for every row (as a verification needs), each from the same state (the
recurrent state restored, the attention cache trimmed), in rotating order.

- `step_s[k]`: median seconds of a step verifying k drafted tokens (k = 0: a plain step);
- `cost[k]`: that over the plain step: the accepted tokens a k-token draft must average
  (plus the one every step makes) to break even, here;
- `predicted_cost[k]`: the same on a machine where a step is limited by reading the
  weights (`--bandwidth-gbs`) or by arithmetic (`--gflops`, two operations per parameter
  per token), whichever is longer: a roofline, not a measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.load.model import LlamaModel
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.models.gguf_info import inspect_gguf

DRAFTS = (0, 8, 16)


def _shaped() -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.support.frognano_shape import shaped_model

    return shaped_model()


def measure(path: Path, depth: int, repeats: int, threads: int) -> dict[str, Any]:
    """Median seconds of a step verifying each of DRAFTS tokens, from one saved state."""
    options = LlamaOptions(n_ctx=depth + 64, n_threads=threads, speculative=False)
    model = LlamaModel(path, options)
    ctx = LlamaContext(model, options)
    try:
        rng = random.Random(0)
        prompt = [rng.randrange(1, model.n_vocab) for _ in range(depth)]
        ctx.decode(prompt, 0)
        saved = ctx.snapshot()
        draft = [rng.randrange(1, model.n_vocab) for _ in range(max(DRAFTS) + 1)]
        times: dict[int, list[float]] = {k: [] for k in DRAFTS}
        for turn in range(repeats):
            order = DRAFTS[turn % len(DRAFTS) :] + DRAFTS[: turn % len(DRAFTS)]
            for k in order:
                if not ctx.restore(saved, depth):
                    raise SystemExit("the context cannot go back to the saved state")
                started = time.perf_counter()
                ctx.decode_rows(draft[: k + 1], depth)
                times[k].append(time.perf_counter() - started)
        return {"median": {k: statistics.median(v) for k, v in times.items()}, "runs": times}
    finally:
        ctx.close()
        model.close()


def predicted(
    tensor_bytes: int, parameters: int, bandwidth: float, gflops: float
) -> dict[int, float]:
    """Roofline cost of a k-token verification in plain steps (weights read once per step)."""

    def step(tokens: int) -> float:
        return max(tensor_bytes / (bandwidth * 1e9), 2 * parameters * tokens / (gflops * 1e9))

    return {k: step(k + 1) / step(1) for k in DRAFTS}


def main(argv: list[str] | None = None) -> int:
    """Measure the verification cost on one model; print JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--model", type=Path, default=None, help="a GGUF (default: FrogNano-shaped)"
    )
    parser.add_argument("--depth", type=int, default=512, help="tokens in the context first")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="0: one per physical core")
    parser.add_argument("--bandwidth-gbs", type=float, default=60.0, help="laptop memory GB/s")
    parser.add_argument("--gflops", type=float, default=400.0, help="laptop CPU GFLOP/s")
    args = parser.parse_args(argv)
    path = args.model or _shaped()
    info = inspect_gguf(path)
    load = os.getloadavg()
    timed = measure(path, args.depth, args.repeats, args.threads)
    plain = timed["median"][0]
    report = {
        "model": str(path),
        "depth": args.depth,
        "step_s": timed["median"],
        "cost": {k: v / plain for k, v in timed["median"].items()},
        "predicted_cost": predicted(
            info.tensor_bytes, info.parameters, args.bandwidth_gbs, args.gflops
        ),
        "laptop": {"bandwidth_gbs": args.bandwidth_gbs, "gflops": args.gflops},
        "runs_s": timed["runs"],
        "load_average": [load, os.getloadavg()],
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
