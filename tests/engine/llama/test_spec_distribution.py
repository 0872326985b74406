"""At temperature 0.6 drafting leaves the output distribution as it is (issue 33).

Many short sampled replies of SmolLM2, each seed used once, with drafting off and with
every step drafted (the greedy continuation, which the model often but not always picks):
a chi-square test of homogeneity on the first three tokens finds no difference. Positive
control: a deliberately wrong acceptance rule (keep the draft whenever the model gives it
at least 5%) fails the same test.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import llama_cpp
import numpy as np
import pytest

from frogdesk.engine.chat import GenerationSettings, Message, Reply
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.conversation.generation import ReplyRun, ReplyStream
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.llama.speculative.drafting import DraftPolicy

pytestmark = [pytest.mark.llama, pytest.mark.slow]

OPTIONS = LlamaOptions(n_ctx=1024, n_threads=1, n_batch=64)
"""One thread: replies are many and short, and a loaded machine descheduling one of two
spinning threads makes every step wait for it."""
TEMPERATURE = 0.6
SAMPLES = 200
"""Replies per arm (each with its own seed)."""
TOKENS = 3
MESSAGES = [
    Message("system", "You are a helpful assistant."),
    Message("user", "Name a colour and a fruit."),
]


class Greedy:
    """Proposes the greedy reply's next tokens while the reply follows it (else nothing)."""

    name = "greedy"

    def __init__(self, prompt_len: int, reference: Sequence[int]) -> None:
        self.prompt_len = prompt_len
        self.reference = list(reference)
        self.last: list[int] = []

    def propose(self, tokens: Sequence[int], limit: int) -> list[int]:
        """The reference continuation of `tokens` ([] once the reply left it)."""
        done = list(tokens[self.prompt_len :])
        ahead = self.reference[len(done) : len(done) + limit]
        self.last = ahead if done == self.reference[: len(done)] else []
        return self.last


class Every(DraftPolicy):
    """Verifies every proposal."""

    def length(self, available: int) -> int:
        """All of them."""
        return available


def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for a chi-square variable with `df` degrees of freedom (regularized upper
    incomplete gamma, by its series or its continued fraction)."""
    a, z = df / 2.0, x / 2.0
    if z <= 0:
        return 1.0
    log_front = a * math.log(z) - z - math.lgamma(a)
    if z < a + 1:
        term = total = 1.0 / a
        n = a
        while term > total * 1e-15:
            n += 1
            term *= z / n
            total += term
        return max(0.0, 1.0 - total * math.exp(log_front))
    b, c, d = z + 1 - a, 1e300, 1 / (z + 1 - a)
    h = d
    for i in range(1, 500):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1 / d
        step = d * c
        h *= step
        if abs(step - 1) < 1e-15:
            break
    return math.exp(log_front) * h


def homogeneity(a: Counter[tuple[int, ...]], b: Counter[tuple[int, ...]]) -> float:
    """The p-value of a chi-square test that two equal-sized samples share a distribution
    (outcomes seen fewer than 10 times in both together are pooled)."""
    assert sum(a.values()) == sum(b.values())
    kept = [o for o in set(a) | set(b) if a[o] + b[o] >= 10]
    pairs = [(a[o], b[o]) for o in kept]
    rest = (sum(a.values()) - sum(x for x, _ in pairs), sum(b.values()) - sum(y for _, y in pairs))
    if sum(rest):
        pairs.append(rest)
    stat = sum((x - y) ** 2 / (x + y) for x, y in pairs if x + y)
    return chi2_sf(stat, len(pairs) - 1)


def test_the_chi_square_tail_is_right() -> None:
    """Known values of the chi-square tail (so the test below reads its statistic right)."""
    assert chi2_sf(3.841, 1) == pytest.approx(0.05, abs=2e-4)
    assert chi2_sf(18.307, 10) == pytest.approx(0.05, abs=2e-4)
    assert chi2_sf(2.0, 4) == pytest.approx(0.7358, abs=2e-4)
    assert chi2_sf(40.0, 10) == pytest.approx(1.7e-5, rel=0.05)


@pytest.fixture(scope="module")
def arms(smollm2_gguf: Path) -> Iterator[dict[str, Counter[tuple[int, ...]]]]:
    """First-token tuples of replies without drafting, with it, and with a wrong rule."""
    plain = LlamaBackend(smollm2_gguf, replace(OPTIONS, speculative=False))
    drafted = LlamaBackend(smollm2_gguf, OPTIONS)
    try:
        greedy = GenerationSettings(max_tokens=8, temperature=0.0)
        reply = Reply()
        for event in plain.generate(MESSAGES, [], greedy):
            reply.add(event)
        assert reply.usage is not None and reply.finish is not None
        prompt_len, reference = reply.usage.prompt_tokens, list(reply.finish.raw_tokens)
        drafter = Greedy(prompt_len, reference)
        drafted.drafting.drafter, drafted.drafting.policy = drafter, Every()
        out: dict[str, Counter[tuple[int, ...]]] = {"off": Counter(), "on": Counter()}
        accepted = 0
        for i in range(SAMPLES):
            out["off"][first_tokens(plain, i)] += 1
            out["on"][first_tokens(drafted, SAMPLES + i)] += 1
            accepted += drafted.last_drafts.accepted
        assert accepted > SAMPLES // 10, "drafts were verified and kept"
        out["wrong"] = wrong_rule_arm(drafted, drafter)
        yield out
    finally:
        plain.close()
        drafted.close()


def first_tokens(backend: LlamaBackend, seed: int) -> tuple[int, ...]:
    """The first `TOKENS` tokens of a sampled reply with this seed."""
    settings = GenerationSettings(max_tokens=TOKENS, temperature=TEMPERATURE, seed=seed)
    tokens: tuple[int, ...] = ()
    for event in backend.generate(MESSAGES, [], settings):
        raw = getattr(event, "raw_tokens", None)
        if raw is not None:
            tokens = tuple(raw)
    return tokens


def wrong_rule_arm(backend: LlamaBackend, drafter: Greedy) -> Counter[tuple[int, ...]]:
    """Replies whose drafts are kept whenever the row gives them at least 5% (wrong: the
    speculative-sampling rule keeps a draft with exactly its probability)."""
    original = ReplyRun._pick
    n_vocab = backend.model.n_vocab

    def biased(run: ReplyRun, stream: ReplyStream, row: int) -> int:
        if 0 <= row < len(drafter.last):
            pointer = llama_cpp.llama_get_logits_ith(backend.context.handle, row)
            logits = np.ctypeslib.as_array(pointer, shape=(n_vocab,)).astype(np.float64)
            p = np.exp((logits - logits.max()) / TEMPERATURE)
            token = drafter.last[row]
            if p[token] / p.sum() >= 0.05:
                stream.sampler.accept(token)
                return token
        return original(run, stream, row)

    counts: Counter[tuple[int, ...]] = Counter()
    setattr(ReplyRun, "_pick", biased)  # noqa: B010 (a class attribute, put back below)
    try:
        for i in range(SAMPLES):
            counts[first_tokens(backend, 2 * SAMPLES + i)] += 1
    finally:
        setattr(ReplyRun, "_pick", original)  # noqa: B010
    return counts


def test_drafting_leaves_the_distribution_as_it_is(
    arms: dict[str, Counter[tuple[int, ...]]],
) -> None:
    assert len(arms["off"]) > 3, "the replies vary"
    assert homogeneity(arms["off"], arms["on"]) > 0.01  # 0.80 here


def test_a_wrong_acceptance_rule_fails_the_same_test(
    arms: dict[str, Counter[tuple[int, ...]]],
) -> None:
    """Positive control: the test tells a biased rule apart."""
    assert homogeneity(arms["off"], arms["wrong"]) < 1e-4  # 1e-33 here
