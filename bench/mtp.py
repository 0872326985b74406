"""Benchmark: what the MTP drafter costs and gains on a GGUF with a NextN block; JSON.

In one run, on the same file, against the model loaded without its MTP block:

- `prefill_ratio`: prefill rate with the MTP draft context following over the rate without;
- `step_ratio`: time of a one-token decode step with the draft context following over one
  without (what every generated token pays while the MTP drafter is loaded);
- `mtp_step_cost`: time of one MTP draft step (the NextN block and the LM head for one
  token) over a one-token decode step of the model: a draft of k tokens costs k of these;
- `speedup`, `identical`, `acceptance`: greedy replies with drafting off and with the
  choice of n-gram and MTP drafting on, tokens per second on over off, whether every reply
  is the same, drafted/accepted tokens per drafter, and (`scored_acceptance`) each
  drafter's running acceptance as the choice scored its proposals, verified or not.

The default model is the tiny random-weight qwen35 with a NextN block (tests/support): its
ratios show the code path works, not what a 4B model gains, and random weights accept no
MTP drafts. Pass `--model` for a real GGUF that keeps its MTP layer. Run from the
repository root as `python -m bench.mtp`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from frogdesk.engine.chat import GenerationSettings, Message, Reply
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.llama.speculative.choice import DrafterChoice

PROSE = (
    "Explain how a hash map handles collisions, and when you would choose open "
    "addressing over chaining. Then show a short Python class that implements one."
)


def reply(backend: LlamaBackend, messages: list[Message], max_tokens: int) -> dict[str, Any]:
    """One greedy reply: its tokens, rate and draft counts per drafter."""
    out = Reply()
    settings = GenerationSettings(max_tokens=max_tokens, temperature=0.0, seed=1)
    for event in backend.generate(messages, [], settings):
        out.add(event)
    usage, finish = out.usage, out.finish
    assert usage is not None and finish is not None
    rate = usage.completion_tokens / usage.decode_seconds if usage.decode_seconds > 0 else 0.0
    return {
        "tokens": list(finish.raw_tokens),
        "tokens_per_second": rate,
        "by_drafter": {k: list(v) for k, v in backend.last_drafts.by_drafter.items()},
    }


def median_seconds(run: Any, reps: int) -> float:
    """Median wall time of `run()` over `reps` calls."""
    times = []
    for _ in range(reps):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def costs(off: LlamaBackend, on: LlamaBackend, prompt: list[int], reps: int) -> dict[str, float]:
    """Prefill and step times with and without the draft context following, and an MTP step."""
    assert on.drafting.mtp is not None
    options = off.options
    plain = LlamaContext(off.model, options)
    followed = on.context
    try:

        def prefill(ctx: LlamaContext) -> None:
            ctx.clear()
            ctx.decode(prompt, 0)

        prefill_plain = median_seconds(lambda: prefill(plain), reps)
        prefill_followed = median_seconds(lambda: prefill(followed), reps)
        base, token = len(prompt), prompt[-1]
        saved = {id(plain): plain.snapshot(), id(followed): followed.snapshot()}

        def step(ctx: LlamaContext) -> None:
            ctx.restore(saved[id(ctx)], base)  # back to the prompt's end (recurrent state too)
            ctx.decode_one(token, base)

        step_plain = median_seconds(lambda: step(plain), reps * 4)
        step_followed = median_seconds(lambda: step(followed), reps * 4)
        followed.restore(saved[id(followed)], base)
        mtp = on.drafting.mtp
        mtp_step = median_seconds(lambda: mtp.propose([*prompt, token], 1), reps * 4)
        return {
            "prefill_ratio": prefill_plain / prefill_followed,
            "step_ratio": step_followed / step_plain,
            "mtp_step_cost": mtp_step / step_plain,
            "prompt_tokens": float(len(prompt)),
        }
    finally:
        plain.close()


def scored_acceptance(backend: LlamaBackend) -> dict[str, float]:
    """Each drafter's running acceptance as the choice scored it (verified or not)."""
    choice = backend.drafting.policy
    if not isinstance(choice, DrafterChoice):
        return {}
    return {d.name: choice.acceptance_of(d.name) for d in choice.drafters}


def main(argv: list[str] | None = None) -> int:
    """Measure on the model with its MTP block and without; print JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", type=Path, default=None, help="GGUF with a NextN block")
    parser.add_argument("--threads", type=int, default=0, help="0: physical cores")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=200)
    parser.add_argument("--prompt-tokens", type=int, default=1024, help="prefill measured")
    parser.add_argument("--json", action="store_true", help="JSON only")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="frogdesk-mtp-bench-") as scratch:
        model = args.model
        if model is None:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
            from tests.support.tiny_qwen35_mtp import write_tiny_qwen35_mtp

            model = write_tiny_qwen35_mtp(Path(scratch) / "tiny-qwen35-mtp.gguf")
        options = LlamaOptions(n_ctx=4096, n_threads=args.threads)
        off = LlamaBackend(model, replace(options, speculative=False))
        on = LlamaBackend(model, options)
        try:
            if on.drafting.mtp is None:
                print(json.dumps({"model": str(model), "mtp": on.drafting.mtp_status}))
                return 1
            messages = [Message("system", "You are a helpful assistant."), Message("user", PROSE)]
            rates: dict[str, list[float]] = {"off": [], "on": []}
            identical = True
            drafts: dict[str, list[int]] = {}
            for _ in range(args.rounds):
                plain = reply(off, messages, args.max_tokens)
                drafting = reply(on, messages, args.max_tokens)
                identical = identical and plain["tokens"] == drafting["tokens"]
                rates["off"].append(plain["tokens_per_second"])
                rates["on"].append(drafting["tokens_per_second"])
                for name, (d, a) in drafting["by_drafter"].items():
                    counts = drafts.setdefault(name, [0, 0])
                    counts[0] += d
                    counts[1] += a
            text = PROSE * (args.prompt_tokens // 8 + 1)
            prompt = on.model.tokenize(text)[: args.prompt_tokens]
            result = {
                "model": str(model),
                "threads": options.threads,
                "mtp": on.drafting.mtp_status,
                "tokens_per_second": {k: statistics.median(v) for k, v in rates.items()},
                "speedup": statistics.median(rates["on"]) / statistics.median(rates["off"]),
                "identical": identical,
                "acceptance": {
                    name: {"drafted": d, "accepted": a, "rate": a / d if d else 0.0}
                    for name, (d, a) in drafts.items()
                },
                "scored_acceptance": scored_acceptance(on),
                **costs(off, on, prompt, args.reps),
            }
        finally:
            off.close()
            on.close()
    json.dump(result, sys.stdout, indent=None if args.json else 2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
