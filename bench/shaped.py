"""Benchmark on a FrogNano-shaped model (random weights, Q4_K_M): speed, memory estimate, mmap.

Prints one JSON object with up to three sections (`--only` picks some):

- `speed`: FrogDesk's prefill and decode rates against llama.cpp's own low-level loop
  (tests/support/raw_llama.py) on the same weights and prompt tokens, interleaved, as ratios of medians;
- `memory`: the memory estimate against the sum of the buffers llama.cpp reports when FrogDesk
  loads the file with its own options, at 8K, 32K and 131K context;
- `mmap`: resident memory (VmRSS/VmHWM after load and after a short decode) and decode rate
  with and without mmap, one fresh process per run, interleaved.

Run from the repository root as `python -m bench.shaped` (it imports tests/support). The
model is generated on first use (tests/support/frognano_shape.py) under `--cache-dir`; `--model`
runs the same measurements on any other GGUF.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from frogdesk.engine.chat import GenerationSettings, Message, Reply
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.decode.compute_thread import on_compute_thread
from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.load.log import buffer_sizes
from frogdesk.engine.llama.load.model import LlamaModel
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.leaf.schemas import tool_schemas
from frogdesk.models.gguf_info import inspect_gguf
from frogdesk.models.memory import estimate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/support: shared writers
from tests.support.frognano_shape import DEFAULT_CACHE, shaped_model
from tests.support.raw_llama import RawContext, RawSettings, load_model, proc_status

MIB = 2**20
WORDS = [
    *[
        "the",
        "function",
        "reads",
        "a",
        "file",
        "and",
        "returns",
        "its",
        "lines",
        "while",
        "the",
        "test",
        "checks",
        "every",
        "value",
    ],
    *[
        "that",
        "comes",
        "back",
        "from",
        "the",
        "parser",
        "so",
        "a",
        "change",
        "in",
        "one",
        "module",
        "shows",
        "up",
        "in",
        "the",
        "other",
    ],
]


def prompt_text(rep: int, words: int) -> str:
    """A different prose prompt per repetition (so nothing of the previous one is reused)."""
    out = [f"Task {rep}:"]
    for i in range(words):
        out.append(WORDS[(i * 7 + rep * 3) % len(WORDS)])
    return " ".join(out)


def _load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# speed ------------------------------------------------------------------------


def measure_speed(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Ours and the reference loop in turns on one model: prefill and decode rates."""
    options = LlamaOptions(n_ctx=args.n_ctx, n_threads=args.threads, speculative=False)
    backend = LlamaBackend(path, options)
    hybrid = backend.model.is_hybrid
    raw = RawContext(
        backend.model.handle,
        RawSettings(
            n_ctx=backend.context.n_ctx,
            n_batch=options.n_batch,
            n_ubatch=options.ubatch,
            threads=options.threads,
            flash_attn=options.flash_attn_for(backend.model.is_hybrid),
            kv_type=options.kv_cache_type,
        ),
    )
    tools = tool_schemas() if args.tools else []
    rows: dict[str, list[float]] = {k: [] for k in ("ours_pp", "raw_pp", "ours_tg", "raw_tg")}
    prompt_sizes: list[int] = []
    try:
        for rep in range(args.reps):
            settings = GenerationSettings(
                temperature=0.0, max_tokens=args.decode + 1, seed=rep, enable_thinking=False
            )
            messages = [Message("user", prompt_text(rep, args.prompt_words))]
            order = ("ours", "raw") if rep % 2 == 0 else ("raw", "ours")
            tokens = _prompt_tokens(backend, messages, tools)
            for who in order:
                if who == "ours":
                    reply = Reply()
                    for event in backend.generate(messages, tools, settings):
                        reply.add(event)
                    usage = reply.usage
                    assert usage is not None
                    rows["ours_pp"].append(usage.evaluated_tokens / usage.prefill_seconds)
                    if usage.completion_tokens > 1 and usage.decode_seconds > 0:
                        rows["ours_tg"].append((usage.completion_tokens - 1) / usage.decode_seconds)
                    prompt_sizes.append(usage.evaluated_tokens)
                else:
                    # on the compute thread, as ours: a second thread decoding would keep a
                    # second OpenMP team alive and slow both (engine/llama/decode/compute_thread.py)
                    raw.clear()
                    prefill = functools.partial(raw.prefill, tokens)
                    rows["raw_pp"].append(len(tokens) / on_compute_thread(prefill))
                    # the reference samples the first token (ours' time to first token) untimed
                    generate = functools.partial(raw.generate, args.decode, len(tokens))
                    rows["raw_tg"].append(args.decode / on_compute_thread(generate))
    finally:
        raw.close()
        backend.close()
    med = {k: statistics.median(v) for k, v in rows.items() if v}
    return {
        "reps": args.reps,
        "prompt_tokens": statistics.median(prompt_sizes),
        "decode_tokens": args.decode,
        "runs_tok_s": {k: [round(x, 2) for x in v] for k, v in rows.items()},
        "median_tok_s": {k: round(v, 2) for k, v in med.items()},
        "prefill_ratio": med["ours_pp"] / med["raw_pp"],
        "decode_ratio": med["ours_tg"] / med["raw_tg"] if "ours_tg" in med else None,
        "options": _load_options(options, hybrid),
    }


def _prompt_tokens(backend: LlamaBackend, messages: list[Message], tools: Any) -> list[int]:
    """The prompt of `messages` as tokens, for the reference loop."""
    text = backend.template.render(messages, tools, add_generation_prompt=True,
                                   enable_thinking=False)  # fmt: skip
    return backend.model.tokenize(text, add_special=False)


def _load_options(options: LlamaOptions, hybrid: bool) -> dict[str, Any]:
    return {
        "use_mmap": options.use_mmap,
        "flash_attn": options.flash_attn_for(hybrid),
        "kv_cache_type": options.kv_cache_type,
        "n_batch": options.n_batch,
        "n_ubatch": options.ubatch,
        "threads": options.threads,
    }


# memory -----------------------------------------------------------------------


def measure_memory(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The estimate against llama.cpp's buffers, FrogDesk's load options, per context size."""
    info = inspect_gguf(path)
    out: dict[str, Any] = {}
    for use_mmap in (True, False):
        options = replace(LlamaOptions(n_threads=args.threads), use_mmap=use_mmap)
        model = LlamaModel(path, options)
        try:
            weights = buffer_sizes(model.log.lines)
            per_context: dict[str, Any] = {}
            for n_ctx in args.contexts:
                mark = model.log.mark()
                ctx = LlamaContext(model, replace(options, n_ctx=n_ctx))
                try:
                    context_buffers = buffer_sizes(model.log.since(mark))
                finally:
                    ctx.close()
                allocated = {**weights, **context_buffers}
                # loaded here without an MTP head, so no MTP draft context is counted
                est = estimate(
                    info, n_ctx, options.kv_cache_type, options.ubatch, options.flash_attn,
                    use_mmap=use_mmap, drafting=False,
                )  # fmt: skip
                total = sum(allocated.values())
                per_context[str(n_ctx)] = {
                    "allocated_mib": {k: round(v, 1) for k, v in allocated.items()},
                    "allocated_total_mib": round(total, 1),
                    "estimate_mib": {
                        k: round(v / MIB, 1) for k, v in est.__dict__.items() if k != "context"
                    },
                    "estimate_total_mib": round(est.total / MIB, 1),
                    "error": est.total / MIB / total - 1,
                }
            out["mmap" if use_mmap else "no_mmap"] = per_context
        finally:
            model.close()
    return out


# mmap -------------------------------------------------------------------------


def mmap_child(path: Path, use_mmap: bool, args: argparse.Namespace) -> dict[str, Any]:
    """One process: load with or without mmap, decode a little, report memory and speed."""
    began = time.perf_counter()
    options = LlamaOptions(n_ctx=args.n_ctx, n_threads=args.threads, use_mmap=use_mmap)
    model = load_model(str(path), use_mmap=use_mmap)
    raw = RawContext(
        model,
        RawSettings(
            n_ctx=args.n_ctx, n_batch=options.n_batch, n_ubatch=options.ubatch,
            threads=options.threads,
            flash_attn=options.flash_attn_for(inspect_gguf(path).recurrent_layers > 0),
            kv_type=options.kv_cache_type,
        ),
    )  # fmt: skip
    loaded = time.perf_counter() - began
    after_load = proc_status()
    prompt = list(range(100, 100 + args.mmap_prompt))
    raw.prefill(prompt)
    seconds = raw.generate(args.decode, len(prompt))
    after_decode = proc_status()
    raw.close()
    return {
        "use_mmap": use_mmap,
        "load_seconds": round(loaded, 2),
        "after_load": after_load,
        "after_decode": after_decode,
        "decode_tok_s": args.decode / seconds,
    }


def measure_mmap(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    """mmap on and off in fresh processes, alternating, `--mmap-reps` each."""
    runs: list[dict[str, Any]] = []
    for rep in range(args.mmap_reps):
        for use_mmap in (True, False) if rep % 2 == 0 else (False, True):
            cmd = [sys.executable, "-m", "bench.shaped", "--model", str(path), "--child-mmap",
                   "1" if use_mmap else "0", "--threads", str(args.threads),
                   "--decode", str(args.decode), "--n-ctx", str(args.n_ctx),
                   "--mmap-prompt", str(args.mmap_prompt)]  # fmt: skip
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            runs.append(json.loads(done.stdout))
    summary: dict[str, Any] = {}
    for use_mmap in (True, False):
        mine = [r for r in runs if r["use_mmap"] == use_mmap]
        key = "mmap" if use_mmap else "no_mmap"
        summary[key] = {
            "decode_tok_s": statistics.median(r["decode_tok_s"] for r in mine),
            "load_seconds": statistics.median(r["load_seconds"] for r in mine),
            **{
                f"{when}_{field}_mib": round(
                    statistics.median(r[when][field] for r in mine) / MIB, 1
                )
                for when in ("after_load", "after_decode")
                for field in ("VmRSS", "VmHWM", "RssAnon", "RssFile")
            },
        }
    summary["decode_ratio_no_mmap_over_mmap"] = (
        summary["no_mmap"]["decode_tok_s"] / summary["mmap"]["decode_tok_s"]
    )
    summary["runs"] = runs
    return summary


def main(argv: list[str] | None = None) -> int:
    """Run the chosen sections and print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, help="any GGUF (default: the shaped model)")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--only", default="speed,memory,mmap", help="comma-separated sections")
    parser.add_argument("--threads", type=int, default=0, help="0: one per physical core")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--prompt-words", type=int, default=400)
    parser.add_argument("--decode", type=int, default=24)
    parser.add_argument(
        "--tools",
        action="store_true",
        help="send FrogDesk's tool schemas (a prompt of about 2,000 more tokens)",
    )
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--contexts", type=lambda s: [int(x) for x in s.split(",")],
                        default=[8192, 32768, 131072])  # fmt: skip
    parser.add_argument("--mmap-reps", type=int, default=2)
    parser.add_argument("--mmap-prompt", type=int, default=64)
    parser.add_argument("--child-mmap", choices=("0", "1"), help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print JSON only (the default)")
    args = parser.parse_args(argv)
    path = args.model or shaped_model(args.cache_dir)
    if args.child_mmap is not None:
        print(json.dumps(mmap_child(path, args.child_mmap == "1", args)))
        return 0
    sections = {s.strip() for s in args.only.split(",") if s.strip()}
    result: dict[str, Any] = {"model": str(path), "load_average_before": _load_average()}
    if "memory" in sections:
        result["memory"] = measure_memory(path, args)
    if "speed" in sections:
        result["speed"] = measure_speed(path, args)
    if "mmap" in sections:
        result["mmap"] = measure_mmap(path, args)
    result["load_average_after"] = _load_average()
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
