"""The sampler chain: vendor and GGUF defaults, seeds, and the tool-call grammar."""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import llama_cpp
import numpy as np

from frogdesk.engine.chat import GenerationSettings
from frogdesk.engine.llama.load.model import LlamaModel, SamplingDefaults
from frogdesk.engine.toolcall.grammar import ToolGrammar

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
    """A llama.cpp sampler chain; `sample` picks the next token and advances the grammar.

    The tool-call grammar is kept out of the chain. llama.cpp's grammar sampler decodes every
    candidate's text against the grammar, which over a whole vocabulary costs as much as a
    decode step of a small model (12 ms per token over SmolLM2's 49,152 tokens, and it grows
    with the vocabulary). Inside a tool call, where most of an agent's tokens are, FrogDesk
    asks the grammar about the few candidates that can be picked instead, with the same
    result as masking the whole vocabulary first:

    - greedy: the largest logit, then the next ones in order, until one passes (the first
      largest passing logit, as the greedy sampler picks);
    - top-k: the first k passing candidates in logit order are handed to the rest of the
      chain (top-k keeps exactly those after masking), so even the random draw is the same;
    - plain temperature (no top-k, top-p or min-p): the token is drawn from the whole
      vocabulary and kept if the grammar passes it, else drawn again, up to `DRAWS` times,
      and then with every refused token masked. That is exact rejection sampling (the same
      distribution as masking first), but a given seed draws differently from llama.cpp's
      own chain.

    Where those cannot decide (ties at the edge, too few passing candidates near the top,
    top-p or min-p without top-k), the grammar masks the whole vocabulary as before.
    """

    WINDOWS = (64, 4096)
    """Candidates checked against the grammar, by logit, before it checks the whole
    vocabulary: where too few pass among 4,096 (the fixed text of a tag), few pass at all."""
    DRAWS = 8
    """Plain temperature: draws from the whole vocabulary before the grammar masks it. Each
    costs a pass of the chain over the vocabulary, far less than the grammar's; any number
    keeps the distribution exact (a draw is kept with the probability masking gives it)."""

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
        self._grammar: Any = None
        self._settings = settings
        self._n_vocab = model.n_vocab
        self._ids = np.arange(model.n_vocab, dtype=np.int32)
        self._banned = np.array(sorted(set(banned)), dtype=np.int64)
        self._plain_greedy = settings.temperature <= 0 and grammar is None and not banned
        """Whether the chain is the greedy sampler alone (it picks the first largest logit)."""
        self.full_scans = 0
        """Constrained picks that needed the grammar over the whole vocabulary."""
        self._add_all(model, settings, banned, seed_offset)
        if grammar is not None:
            self._grammar = _grammar_sampler(model, grammar)
            if not self._grammar:
                self.close()
                raise ValueError("llama.cpp refused a sampler (bad grammar?)")

    def _add(self, sampler: Any) -> None:
        if not sampler:
            raise ValueError("llama.cpp refused a sampler (bad grammar?)")
        llama_cpp.llama_sampler_chain_add(self._chain, sampler)

    def _add_all(
        self, model: LlamaModel, s: SamplerSettings, banned: Sequence[int], seed_offset: int
    ) -> None:
        if banned:
            bias = (llama_cpp.llama_logit_bias * len(banned))()
            for i, token in enumerate(banned):
                bias[i].token = llama_cpp.llama_token(token)
                bias[i].bias = float("-inf")
            self._add(llama_cpp.llama_sampler_init_logit_bias(model.n_vocab, len(banned), bias))
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
        if self._grammar is None:
            return int(llama_cpp.llama_sampler_sample(self._chain, ctx, row))
        token = self._constrained(ctx, row)
        self.accept(token)
        return token

    def choose(self, ctx: Any, row: int) -> Pick:
        """What the chain would pick from batch row `row` of `ctx`, without accepting it.

        Nothing enters the chain's state (grammar, repetition): `accept` the token once it
        is kept, or decode the position again and `sample` there instead. Meant for greedy
        chains, where the pick's lead over the next possible token says how much rounding
        it can stand.
        """
        logits = self._logits(ctx, row)
        if self._plain_greedy:
            return self._choose_greedy(logits)
        scale = float(np.abs(logits).max())
        if self._settings.temperature <= 0:
            leading = self._leading_valid(logits, 2)
            if leading is not None:
                ids, values = leading
                lead = float(values[0]) - float(values[1])
                return Pick(int(ids[0]), lead if lead == lead else 0.0, scale)
        token, lead = self._apply_whole(logits, grammar=True, lead=True)
        return Pick(token, lead if lead == lead else 0.0, scale)

    def _logits(self, ctx: Any, row: int) -> np.ndarray:
        """Batch row `row`'s logits (a view into llama.cpp's buffer)."""
        pointer = llama_cpp.llama_get_logits_ith(ctx, row)
        return np.ctypeslib.as_array(pointer, shape=(self._n_vocab,))

    def _constrained(self, ctx: Any, row: int) -> int:
        """The token the chain with the grammar first picks from batch row `row` (see the
        class)."""
        s = self._settings
        logits = self._logits(ctx, row)
        if s.temperature <= 0:
            if not self._banned.size:
                # the first largest logit: if the grammar passes it, no passing token is
                # larger, nor as large with a smaller id
                best = int(logits.argmax())
                if self._passes(np.array([best]), logits).all():
                    return best
            leading = self._leading_valid(logits, 1)
            if leading is not None:
                return int(leading[0][0])
        elif s.top_k > 0:
            leading = self._leading_valid(logits, s.top_k, distinct=True)
            if leading is not None:
                return self._draw(*leading)
        elif s.top_p >= 1.0 and s.min_p <= 0.0:
            for _ in range(self.DRAWS):
                # llama.cpp's own pass over the vocabulary, as without a grammar (it also
                # accepts the token into the chain, where no sampler keeps state)
                token = int(llama_cpp.llama_sampler_sample(self._chain, ctx, row))
                if self._passes(np.array([token]), logits).all():
                    return token
        return self._apply_whole(logits, grammar=True)[0]

    def _leading_valid(
        self, logits: np.ndarray, count: int, *, distinct: bool = False
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The first `count` candidates the grammar passes, by logit (then id), and their
        logits; None when a window of the largest logits cannot settle them (or, with
        `distinct`, when two of them, or the last and the next, are tied)."""
        n = self._n_vocab
        if self._banned.size:
            logits = logits.copy()
            logits[self._banned] = -np.inf
        for least in self.WINDOWS:
            size = max(least, 4 * count)
            if size >= n // 2:
                break
            order = np.argpartition(logits, n - size - 1)
            window = order[n - size :]
            edge = logits[order[n - size - 1]]  # no logit outside the window is larger
            window = window[np.lexsort((window, -logits[window]))]
            passing = window[self._passes(window, logits)]
            values = logits[passing]
            if passing.size >= count and values[count - 1] > edge:
                if distinct:
                    kept = values[: count + 1]
                    if np.unique(kept).size < kept.size:
                        return None
                return passing[:count], values[:count]
        return None

    def _passes(self, ids: np.ndarray, logits: np.ndarray) -> np.ndarray:
        """Which of `ids` the grammar passes in its present state (a lazy grammar that has
        not been triggered passes every one)."""
        data = np.empty(ids.size, dtype=_TOKEN_DATA)
        data["id"] = ids
        data["logit"] = logits[ids]
        data["p"] = 0.0
        array = llama_cpp.llama_token_data_array(
            data.ctypes.data_as(ctypes.POINTER(llama_cpp.llama_token_data)), ids.size, -1, False
        )
        llama_cpp.llama_sampler_apply(self._grammar, ctypes.byref(array))
        return np.asarray(np.isfinite(data["logit"]))

    def _draw(self, ids: np.ndarray, values: np.ndarray) -> int:
        """The chain's pick from candidates already cut to top-k, sorted by logit."""
        data = np.empty(ids.size, dtype=_TOKEN_DATA)
        data["id"] = ids
        data["logit"] = values
        data["p"] = 0.0
        array = llama_cpp.llama_token_data_array(
            data.ctypes.data_as(ctypes.POINTER(llama_cpp.llama_token_data)), ids.size, -1, True
        )
        llama_cpp.llama_sampler_apply(self._chain, ctypes.byref(array))
        if not 0 <= array.selected < array.size:
            raise ValueError("the sampler chain selected no token")
        left = np.ctypeslib.as_array(array.data, shape=(int(array.size),)).view(_TOKEN_DATA)
        token = int(left["id"][array.selected])
        del data  # kept alive until `left` is read: the candidates live in it
        return token

    def _apply_whole(
        self, logits: np.ndarray, *, grammar: bool, lead: bool = False
    ) -> tuple[int, float]:
        """The chain (after the grammar, with `grammar`) over the whole vocabulary: its pick
        and, with `lead`, the pick's lead over the next candidate the chain left (else, or
        when none is left, inf)."""
        n_vocab = self._n_vocab
        data = np.empty(n_vocab, dtype=_TOKEN_DATA)
        data["id"] = self._ids
        data["logit"] = logits
        data["p"] = 0.0
        array = llama_cpp.llama_token_data_array(
            data.ctypes.data_as(ctypes.POINTER(llama_cpp.llama_token_data)), n_vocab, -1, False
        )
        if grammar and self._grammar is not None:
            self.full_scans += 1
            llama_cpp.llama_sampler_apply(self._grammar, ctypes.byref(array))
        llama_cpp.llama_sampler_apply(self._chain, ctypes.byref(array))
        if not 0 <= array.selected < array.size:
            raise ValueError("the sampler chain selected no token")
        # The chain may shrink or reorder the candidates: read what it left (in `data`,
        # which must outlive the read).
        left = np.ctypeslib.as_array(array.data, shape=(int(array.size),)).view(_TOKEN_DATA)
        selected = int(array.selected)
        token = int(left["id"][selected])
        gap = float("inf")
        if lead and left.size > 1:
            possible = left["logit"].astype(np.float64)
            best = possible[selected]
            possible[selected] = -np.inf
            gap = float(best - possible.max())
        del data
        return token, gap

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
        if self._grammar is not None:
            llama_cpp.llama_sampler_accept(self._grammar, token)
        llama_cpp.llama_sampler_accept(self._chain, token)

    def close(self) -> None:
        """Free the chain, every sampler in it, and the grammar."""
        if self._chain is not None:
            llama_cpp.llama_sampler_free(self._chain)
            self._chain = None
        if self._grammar is not None:
            llama_cpp.llama_sampler_free(self._grammar)
            self._grammar = None


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
