"""The sampler chain: vendor and GGUF defaults, seeds, and the tool-call grammar."""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import llama_cpp
import numpy as np

from frogdesk.engine.llama.model import LlamaModel, SamplingDefaults
from frogdesk.engine.toolcall.grammar import ToolGrammar
from frogdesk.engine.types import GenerationSettings

_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])
"""llama_token_data's layout."""
VENDOR_TEMPERATURE = 0.6
"""FrogNano's vendor samples at temperature 0.6."""
RANDOM_SEED = 0xFFFFFFFF
"""llama.cpp's LLAMA_DEFAULT_SEED: a fresh random seed."""


class Pick(NamedTuple):
    """A token the chain would pick, its lead over the next possible one (logits), and the
    largest |logit| of the row (the scale rounding errors grow with)."""

    token: int
    lead: float
    scale: float


@dataclass(frozen=True)
class SamplerSettings:
    """Resolved sampling values for one reply."""

    temperature: float
    top_k: int = 0
    top_p: float = 1.0
    min_p: float = 0.0
    seed: int = RANDOM_SEED


def resolve(settings: GenerationSettings, defaults: SamplingDefaults) -> SamplerSettings:
    """Explicit settings first, then the GGUF's `general.sampling.*`, then the vendor's."""

    def pick(value: Any, fallback: Any, vendor: Any) -> Any:
        if value is not None:
            return value
        return fallback if fallback is not None else vendor

    return SamplerSettings(
        temperature=float(pick(settings.temperature, defaults.temperature, VENDOR_TEMPERATURE)),
        top_k=int(pick(settings.top_k, defaults.top_k, 0)),
        top_p=float(pick(settings.top_p, defaults.top_p, 1.0)),
        min_p=float(pick(settings.min_p, defaults.min_p, 0.0)),
        seed=RANDOM_SEED if settings.seed is None else settings.seed & 0xFFFFFFFF,
    )


@dataclass(frozen=True)
class GrammarUse:
    """How a grammar joins the chain: from the start, or lazily on trigger tokens/patterns."""

    grammar: ToolGrammar
    lazy: bool
    trigger_tokens: tuple[int, ...] = ()
    trigger_patterns: tuple[str, ...] = ()


class Sampler:
    """A llama.cpp sampler chain; `sample` picks the next token and advances the grammar."""

    def __init__(
        self,
        model: LlamaModel,
        settings: SamplerSettings,
        *,
        grammar: GrammarUse | None = None,
        banned: Sequence[int] = (),
        seed_offset: int = 0,
    ) -> None:
        params = llama_cpp.llama_sampler_chain_default_params()
        params.no_perf = True
        self._chain: Any = llama_cpp.llama_sampler_chain_init(params)
        self._n_vocab = model.n_vocab
        self._ids = np.arange(model.n_vocab, dtype=np.int32)
        self._plain_greedy = settings.temperature <= 0 and grammar is None and not banned
        """Whether the chain is the greedy sampler alone (it picks the first largest logit)."""
        self._add_all(model, settings, grammar, banned, seed_offset)

    def _add(self, sampler: Any) -> None:
        if not sampler:
            raise ValueError("llama.cpp refused a sampler (bad grammar?)")
        llama_cpp.llama_sampler_chain_add(self._chain, sampler)

    def _add_all(
        self,
        model: LlamaModel,
        s: SamplerSettings,
        grammar: GrammarUse | None,
        banned: Sequence[int],
        seed_offset: int,
    ) -> None:
        if banned:
            bias = (llama_cpp.llama_logit_bias * len(banned))()
            for i, token in enumerate(banned):
                bias[i].token = llama_cpp.llama_token(token)
                bias[i].bias = float("-inf")
            self._add(llama_cpp.llama_sampler_init_logit_bias(model.n_vocab, len(banned), bias))
        if grammar is not None:
            self._add(_grammar_sampler(model, grammar))
        if s.temperature <= 0:
            self._add(llama_cpp.llama_sampler_init_greedy())
            return
        if s.top_k > 0:
            self._add(llama_cpp.llama_sampler_init_top_k(s.top_k))
        if s.top_p < 1.0:
            self._add(llama_cpp.llama_sampler_init_top_p(s.top_p, 1))
        if s.min_p > 0.0:
            self._add(llama_cpp.llama_sampler_init_min_p(s.min_p, 1))
        self._add(llama_cpp.llama_sampler_init_temp(s.temperature))
        seed = s.seed if s.seed == RANDOM_SEED else (s.seed + seed_offset) & 0x7FFFFFFF
        self._add(llama_cpp.llama_sampler_init_dist(seed))

    @property
    def plain_greedy(self) -> bool:
        """Whether the chain is the greedy sampler alone (`choose` then costs little)."""
        return self._plain_greedy

    def sample(self, ctx: Any, row: int = -1) -> int:
        """Sample from the logits of batch row `row` of `ctx` (the last by default), and
        accept the token into the chain (grammar, repetition state)."""
        return int(llama_cpp.llama_sampler_sample(self._chain, ctx, row))

    def choose(self, ctx: Any, row: int) -> Pick:
        """What the chain would pick from batch row `row` of `ctx`, without accepting it.

        Nothing enters the chain's state (grammar, repetition): `accept` the token once it
        is kept, or decode the position again and `sample` there instead. Meant for greedy
        chains, where the pick's lead over the next possible token says how much rounding
        it can stand.
        """
        n_vocab = self._n_vocab
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx, row), shape=(n_vocab,))
        if self._plain_greedy:
            return self._choose_greedy(logits)
        data = np.empty(n_vocab, dtype=_TOKEN_DATA)
        data["id"] = self._ids
        data["logit"] = logits
        data["p"] = 0.0
        array = llama_cpp.llama_token_data_array(
            data.ctypes.data_as(ctypes.POINTER(llama_cpp.llama_token_data)), n_vocab, -1, False
        )
        llama_cpp.llama_sampler_apply(self._chain, ctypes.byref(array))
        if not 0 <= array.selected < array.size:
            raise ValueError("the sampler chain selected no token")
        # The chain may shrink or reorder the candidates: read what it left.
        left = np.ctypeslib.as_array(array.data, shape=(int(array.size),)).view(_TOKEN_DATA)
        token = int(left["id"][array.selected])
        possible = left["logit"].astype(np.float64)
        best = possible[array.selected]
        possible[array.selected] = -np.inf
        lead = float(best - possible.max()) if possible.size > 1 else float("inf")
        return Pick(token, lead if lead == lead else 0.0, float(np.abs(logits).max()))

    def _choose_greedy(self, logits: np.ndarray) -> Pick:
        """`choose` for a chain that is the greedy sampler alone, without running it: the
        first largest logit (the greedy sampler's pick) and its lead over every other."""
        token = int(logits.argmax())
        best = float(logits[token])
        # the runner-up, read on both sides of the pick (no copy of the row per token)
        runner_up = max(
            float(logits[:token].max(initial=-np.inf)),
            float(logits[token + 1 :].max(initial=-np.inf)),
        )
        lead = best - runner_up
        scale = max(abs(best), abs(float(logits.min())))
        return Pick(token, lead if lead == lead else 0.0, scale)

    def accept(self, token: int) -> None:
        """Take `token` into the chain's state, as `sample` does after picking it."""
        llama_cpp.llama_sampler_accept(self._chain, token)

    def close(self) -> None:
        """Free the chain and every sampler in it."""
        if self._chain is not None:
            llama_cpp.llama_sampler_free(self._chain)
            self._chain = None


def _grammar_sampler(model: LlamaModel, use: GrammarUse) -> Any:
    text = use.grammar.text.encode("utf-8")
    root = use.grammar.root.encode("utf-8")
    if not use.lazy:
        return llama_cpp.llama_sampler_init_grammar(model.vocab, text, root)
    patterns = (ctypes.c_char_p * max(1, len(use.trigger_patterns)))()
    for i, pattern in enumerate(use.trigger_patterns):
        patterns[i] = pattern.encode("utf-8")
    tokens = (llama_cpp.llama_token * max(1, len(use.trigger_tokens)))(*use.trigger_tokens)
    return llama_cpp.llama_sampler_init_grammar_lazy_patterns(
        model.vocab,
        text,
        root,
        patterns,
        len(use.trigger_patterns),
        tokens,
        len(use.trigger_tokens),
    )
