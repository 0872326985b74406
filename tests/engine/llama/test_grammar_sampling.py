"""Picking under the tool-call grammar without masking the whole vocabulary.

The reference is llama.cpp's own chain with the grammar sampler first, which checks every
token of the vocabulary against the grammar: FrogDesk's Sampler must pick exactly what it
picks (greedy, and top-k with the same seed), and, with plain temperature, draw from the
same distribution.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import llama_cpp
import numpy as np
import pytest

from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.decode.sampling import GrammarUse, Sampler, SamplerSettings
from frogdesk.engine.llama.load.model import LlamaModel
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.toolcall.grammar import ToolGrammar, tool_call_grammar
from frogdesk.leaf.schemas import tool_schemas

pytestmark = pytest.mark.llama

OPTIONS = LlamaOptions(n_ctx=1024, n_threads=2)
PROMPT = (
    "<|im_start|>user\nShow me the file src/app.py, then fix the typo in it.<|im_end|>\n"
    "<|im_start|>assistant\n"
)
REQUIRED = GrammarUse(tool_call_grammar(tool_schemas(), leading_newlines=True), lazy=False)


@pytest.fixture
def model(smollm2_gguf: Path) -> Iterator[LlamaModel]:
    loaded = LlamaModel(smollm2_gguf, OPTIONS)
    yield loaded
    loaded.close()


def reference_chain(model: LlamaModel, settings: SamplerSettings) -> Any:
    """llama.cpp's chain with the grammar first, as FrogDesk built it before."""
    chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
    text, root = REQUIRED.grammar.text.encode(), REQUIRED.grammar.root.encode()
    llama_cpp.llama_sampler_chain_add(
        chain, llama_cpp.llama_sampler_init_grammar(model.vocab, text, root)
    )
    if settings.temperature <= 0:
        llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_greedy())
        return chain
    if settings.top_k > 0:
        llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_top_k(settings.top_k))
    if settings.top_p < 1.0:
        llama_cpp.llama_sampler_chain_add(
            chain, llama_cpp.llama_sampler_init_top_p(settings.top_p, 1)
        )
    llama_cpp.llama_sampler_chain_add(
        chain, llama_cpp.llama_sampler_init_temp(settings.temperature)
    )
    llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_dist(settings.seed))
    return chain


def follow(model: LlamaModel, settings: SamplerSettings, steps: int) -> tuple[int, int, int]:
    """Generate `steps` tokens with the reference chain while FrogDesk's Sampler picks from
    the same logits; returns (steps, steps where a grammar-less pick differs, full scans)."""
    ctx = LlamaContext(model, OPTIONS)
    reference = reference_chain(model, settings)
    sampler = Sampler(model, settings, grammar=REQUIRED)
    free = Sampler(model, settings)
    constrained = 0
    try:
        tokens = model.tokenize(PROMPT)
        ctx.decode(tokens, 0)
        position = len(tokens)
        for step in range(steps):
            token = int(llama_cpp.llama_sampler_sample(reference, ctx.handle, -1))
            assert sampler.sample(ctx.handle, -1) == token, step
            constrained += free.sample(ctx.handle, -1) != token
            if model.is_eog(token):
                break
            ctx.decode_one(token, position)
            position += 1
        return step + 1, constrained, sampler.full_scans
    finally:
        llama_cpp.llama_sampler_free(reference)
        sampler.close()
        free.close()
        ctx.close()


def test_greedy_picks_equal_the_grammar_first_chain(model: LlamaModel) -> None:
    steps, constrained, full_scans = follow(model, SamplerSettings(temperature=0.0), 60)
    assert steps > 20
    assert constrained > 0  # control: without the grammar the model picks other tokens
    assert full_scans < steps // 2  # the picks were made without masking the vocabulary


@pytest.mark.parametrize("seed", [3, 11])
def test_top_k_draws_equal_the_grammar_first_chain_seed_for_seed(
    model: LlamaModel, seed: int
) -> None:
    settings = SamplerSettings(temperature=0.8, top_k=20, top_p=0.95, seed=seed)
    steps, constrained, full_scans = follow(model, settings, 60)
    assert steps > 20
    assert constrained > 0
    # Where the grammar allows fewer than k tokens in all (a literal such as a tag), only
    # the whole vocabulary can show that no other passes: those picks scan it.
    assert full_scans < steps * 3 // 4


COLOUR = "My favourite colour is"
HALF = GrammarUse(ToolGrammar('root ::= " " [a-m] [a-z]*'), lazy=False)
"""Refuses about half of SmolLM2's probability after `COLOUR`: a word after a space,
starting with a to m. Most refused draws pass when drawn again."""
RARE = GrammarUse(ToolGrammar('root ::= " " [qxyz] [a-z]*'), lazy=False)
"""Refuses nearly all of it: draws again rarely pass, and the grammar masks."""


@pytest.mark.parametrize(("use", "low", "high"), [(HALF, 0.2, 0.8), (RARE, 0.0, 0.05)])
def test_plain_temperature_draws_from_the_masked_distribution(
    model: LlamaModel, use: GrammarUse, low: float, high: float
) -> None:
    """A draw the grammar refuses is drawn again, then drawn with the grammar masking: the
    frequencies must be the model's probabilities over the passing tokens, renormalized."""
    ctx = LlamaContext(model, OPTIONS)
    try:
        ctx.decode(model.tokenize(COLOUR), 0)
        logits = np.array(ctx.logits(), dtype=np.float64)
        data = np.zeros(
            model.n_vocab, dtype=[("id", np.int32), ("logit", np.float32), ("p", np.float32)]
        )
        data["id"] = np.arange(model.n_vocab)
        data["logit"] = logits
        array = llama_cpp.llama_token_data_array(
            data.ctypes.data_as(llama_cpp.llama_token_data_p), model.n_vocab, -1, False
        )
        text, root = use.grammar.text.encode(), use.grammar.root.encode()
        grammar = llama_cpp.llama_sampler_init_grammar(model.vocab, text, root)
        llama_cpp.llama_sampler_apply(grammar, array)  # llama.cpp's own mask, whole vocabulary
        llama_cpp.llama_sampler_free(grammar)
        allowed = np.isfinite(data["logit"])
        model_p = np.exp(logits - logits.max())
        model_p /= model_p.sum()
        assert low < model_p[allowed].sum() < high  # the case the test is for
        exact = np.where(allowed, model_p, 0.0) / model_p[allowed].sum()

        draws = 1000
        counts: Counter[int] = Counter()
        unmasked: Counter[int] = Counter()
        full_scans = 0
        for seed in range(draws):
            settings = SamplerSettings(temperature=1.0, seed=seed)
            sampler = Sampler(model, settings, grammar=use)
            counts[sampler.sample(ctx.handle, -1)] += 1
            full_scans += sampler.full_scans
            sampler.close()
            free = Sampler(model, settings)
            unmasked[free.sample(ctx.handle, -1)] += 1
            free.close()
    finally:
        ctx.close()

    likely = np.flatnonzero(exact > 0.01)  # the rest is one bin: its tokens are rarely drawn

    def distance(found: Counter[int]) -> float:
        """Total variation distance from `exact`, over the likely tokens and the rest."""
        frequency = np.array([found[int(t)] for t in likely]) / draws
        rest = 1.0 - frequency.sum()
        expected = exact[likely]
        return 0.5 * float(np.abs(frequency - expected).sum() + abs(rest - (1 - expected.sum())))

    assert all(allowed[t] for t in counts)  # every draw passes the grammar
    assert len(counts) >= 4
    if use is HALF:
        assert full_scans < draws // 10  # nearly every draw passed by being drawn again
    else:
        assert draws // 2 < full_scans < draws  # mostly masked, some passed drawn again
    assert distance(counts) < 0.08
    # Control: the same seeds without the grammar are this far from the masked distribution.
    assert distance(unmasked) > 0.25


def test_the_benchmark_reports_each_mode(smollm2_gguf: Path) -> None:
    root = Path(__file__).resolve().parents[3]
    result = subprocess.run(
        [sys.executable, "bench/grammar_sampling.py", "--model", str(smollm2_gguf),
         "--tokens", "24", "--json"],
        cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    modes = json.loads(result.stdout)["modes"]
    assert set(modes) == {"greedy", "temperature_0.6", "top_k_20"}
    assert modes["greedy"]["identical"] and modes["top_k_20"]["identical"]
    assert all(m["tokens"][0] == m["tokens"][1] == 24 for m in modes.values())
