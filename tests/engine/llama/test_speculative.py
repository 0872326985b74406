"""Speculative decoding on real llama.cpp: drafts verified in one batch leave no trace when rejected."""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import llama_cpp
import numpy as np
import pytest

from frogdesk.engine.chat import (
    ContentDelta,
    Decoded,
    GenerationSettings,
    Message,
    ReasoningDelta,
    Reply,
    ToolSchema,
)
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.decode.sampling import Sampler
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.llama.speculative import drafting
from frogdesk.engine.llama.speculative.drafting import DraftPolicy
from frogdesk.engine.llama.speculative.ngram import NgramDrafter

pytestmark = pytest.mark.llama

START = [
    Message("system", "You are a software-engineering agent."),
    Message("user", "Read calc.py and fix the division by zero in divide()."),
]
READ_TOOL: ToolSchema = {
    "type": "function",
    "function": {
        "name": "Read",
        "description": "Read a file.",
        "parameters": {
            "type": "object",
            "properties": {"file_path": {"type": "string"}},
            "required": ["file_path"],
        },
    },
}
OPTIONS = LlamaOptions(n_ctx=4096, n_threads=1, n_batch=64)


class ScriptedDrafter:
    """Proposes the reference reply's next tokens, or a wrong token in their place.

    Every `wrong_every`-th proposal has its `wrong_at`-th token replaced, so a run sees
    drafts accepted whole, accepted in part, and rejected at once.
    """

    name = "scripted"

    def __init__(self, prompt_len: int, reference: Sequence[int], n_vocab: int) -> None:
        self.prompt_len = prompt_len
        self.reference = list(reference)
        self.n_vocab = n_vocab
        self.calls = 0

    def propose(self, tokens: Sequence[int], limit: int) -> list[int]:
        """The reference continuation of `tokens`, one token wrong in some proposals."""
        self.calls += 1
        done = list(tokens[self.prompt_len :])
        if done != self.reference[: len(done)]:
            return [(tokens[-1] + 1) % self.n_vocab]
        draft = self.reference[len(done) : len(done) + min(limit, 1 + self.calls % 4)]
        wrong_at = self.calls % 3
        if draft and self.calls % 2 == 0 and wrong_at < len(draft):
            draft[wrong_at] = (draft[wrong_at] + 7) % self.n_vocab
        return draft


class RandomDrafter:
    """Proposes random tokens: every draft a grammar or the model may reject."""

    name = "random"

    def __init__(self, n_vocab: int) -> None:
        self.n_vocab = n_vocab
        self.rng = random.Random(5)

    def propose(self, tokens: Sequence[int], limit: int) -> list[int]:
        """`limit` random tokens (at most 4)."""
        return [self.rng.randrange(self.n_vocab) for _ in range(min(limit, 4))]


class AlwaysVerify(DraftPolicy):
    """Verifies every proposal whatever it costs (to exercise the rollback on every step)."""

    def length(self, available: int) -> int:
        """All of them."""
        return min(available, self.max_draft)


def generate(backend: LlamaBackend, messages: list[Message], **kw: object) -> Reply:
    """One reply to the end, greedy unless told."""
    out = Reply()
    tools = kw.pop("tools", [READ_TOOL])
    settings = GenerationSettings(**{"max_tokens": 24, "temperature": 0.0, "seed": 1, **kw})  # type: ignore[arg-type]
    for event in backend.generate(messages, tools, settings):  # type: ignore[arg-type]
        out.add(event)
    assert out.finish is not None and out.usage is not None
    return out


def replay_logits(backend: LlamaBackend) -> np.ndarray:
    """Logits of a fresh context fed the transcript with the backend's own decode calls."""
    t = backend.transcript
    fresh = LlamaContext(backend.model, OPTIONS)
    try:
        pos = 0
        for start, count in t.schedule:
            assert start == pos
            fresh.decode(t.tokens[start : start + count], start)
            pos += count
        assert pos == t.n_past
        return np.array(fresh.logits())
    finally:
        fresh.close()


@pytest.fixture
def qwen(qwen35_gguf: Path) -> Iterator[LlamaBackend]:
    """The tiny hybrid model (DeltaNet recurrent state beside the KV cache)."""
    b = LlamaBackend(qwen35_gguf, OPTIONS)
    yield b
    b.close()


def reference_reply(path: Path, messages: list[Message], **kw: object) -> tuple[int, list[int]]:
    """Prompt length and sampled tokens of a reply made without drafting."""
    from dataclasses import replace

    b = LlamaBackend(path, replace(OPTIONS, speculative=False))
    try:
        r = generate(b, messages, **kw)
        assert r.usage is not None and r.usage.drafted_tokens == 0
        return r.usage.prompt_tokens, list(b.transcript.tokens[r.usage.prompt_tokens :])
    finally:
        b.close()


def test_rejected_drafts_leave_no_trace_in_the_hybrid_state(
    qwen: LlamaBackend, qwen35_gguf: Path
) -> None:
    """After accepted and rejected drafts the next logits equal a run that never saw them."""
    assert qwen.model.is_hybrid
    prompt_len, reference = reference_reply(qwen35_gguf, START)
    drafter = ScriptedDrafter(prompt_len, reference, qwen.model.n_vocab)
    qwen.drafting.drafter, qwen.drafting.policy = drafter, AlwaysVerify()
    r = generate(qwen, START)
    assert r.usage is not None and r.finish is not None
    drafted, accepted = r.usage.drafted_tokens, r.usage.accepted_tokens
    assert drafted > accepted > 0, "both accepted and rejected drafts"
    assert any(count > 1 for _, count in qwen.transcript.schedule[-20:]), "drafts were batched"
    # The state holds exactly the kept ones (that each one is the model's own pick, and
    # not necessarily the one decoding alone makes at a near-tie: test_spec_exact.py).
    ours = np.array(qwen.last_logits())
    assert np.abs(ours - replay_logits(qwen)).max() == 0.0
    # The last sampled token, decoded as the next turn would, reads on from the same state.
    qwen.catch_up()
    assert qwen.transcript.n_past == len(qwen.transcript.tokens)
    assert np.abs(np.array(qwen.last_logits()) - replay_logits(qwen)).max() == 0.0


def test_drafted_tokens_reach_the_recurrent_state_until_restored(qwen: LlamaBackend) -> None:
    """Positive control: decoding a draft changes the DeltaNet state, so it must be undone."""
    tokens = qwen.model.tokenize("<|im_start|>user\nhello there, model<|im_end|>\n")
    probe = qwen.model.tokenize("x")
    clean = LlamaContext(qwen.model, OPTIONS)
    dirty = LlamaContext(qwen.model, OPTIONS)
    try:
        clean.decode(tokens, 0)
        dirty.decode(tokens, 0)
        before = dirty.snapshot()
        dirty.decode_rows([42, 43], len(tokens))
        assert dirty.snapshot() != before, "the draft reached the recurrent state"
        assert dirty.restore(before, len(tokens))
        assert dirty.snapshot() == before
        clean.decode(probe, len(tokens))
        dirty.decode(probe, len(tokens))
        assert np.abs(np.array(clean.logits()) - np.array(dirty.logits())).max() == 0.0
    finally:
        clean.close()
        dirty.close()


def test_sampled_replies_with_drafts_draw_once_per_token_from_its_own_row(
    qwen: LlamaBackend, qwen35_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At temperature 0.6 the sampler draws once per emitted token, in order, from the
    logits computed for that token's position, whatever batch computed them: a copy of
    each chain taken before its first draw (same seed, same state), fed those rows, draws
    the same reply.

    The reply need not equal drafting off's: a batch row rounds differently from a 1-token
    step (by about 3e-3 of logits near 7 on an AMD EPYC; not at all on other CPUs), so a
    draw near a boundary can fall otherwise. That both follow one distribution is
    test_spec_distribution.py's chi-square test. The control: a replay that draws once
    more, as a loop sampling a row twice would, does not give the reply.
    """
    kw: dict[str, object] = {"temperature": 0.6, "seed": 9, "tools": []}
    prompt_len, reference = reference_reply(qwen35_gguf, START, **kw)
    qwen.drafting.drafter = ScriptedDrafter(prompt_len, reference, qwen.model.n_vocab)
    qwen.drafting.policy = AlwaysVerify()
    pristine: dict[int, Sampler] = {}
    draws: list[tuple[int, np.ndarray, int]] = []
    target = qwen.context
    sample = target.sample

    def twin_of(sampler: Sampler) -> Sampler:
        """The chain in the state it is in now (its seed's draws to come included)."""
        twin = copy.copy(sampler)
        twin._chain = llama_cpp.llama_sampler_clone(sampler._chain)
        return twin

    def recorded(sampler: Sampler, row: int = -1) -> int:
        assert sampler._grammar is None  # no tools: the chain alone samples
        if id(sampler) not in pristine:
            pristine[id(sampler)] = twin_of(sampler)  # before its first draw
        pointer = llama_cpp.llama_get_logits_ith(target.handle, row)
        logits = np.ctypeslib.as_array(pointer, shape=(qwen.model.n_vocab,)).copy()
        token = sample(sampler, row)
        draws.append((id(sampler), logits, token))
        return token

    def replay(*, one_more: bool = False) -> list[int]:
        chains = {key: twin_of(chain) for key, chain in pristine.items()}
        try:
            if one_more:
                chains[draws[0][0]]._apply_whole(draws[0][1], grammar=False)
            return [chains[key]._apply_whole(row, grammar=False)[0] for key, row, _ in draws]
        finally:
            for chain in chains.values():
                chain.close()

    monkeypatch.setattr(target, "sample", recorded)
    try:
        r = generate(qwen, START, **kw)
        assert r.usage is not None and r.usage.accepted_tokens > 0
        assert r.usage.drafted_tokens > r.usage.accepted_tokens, "rejected drafts too"
        drawn = [token for _, _, token in draws]
        assert len(drawn) == r.usage.completion_tokens  # one draw a token, drafted or not
        # what the reply is made of (the turn's closing tokens follow it in the transcript)
        assert list(qwen.transcript.tokens[prompt_len : prompt_len + len(drawn)]) == drawn
        assert replay() == drawn
        assert replay(one_more=True) != drawn  # control: the check sees an extra draw
    finally:
        for chain in pristine.values():
            chain.close()


def test_drafts_the_grammar_rejects_are_rejected_drafts(qwen: LlamaBackend) -> None:
    """A forced tool call with random drafts: every wrong draft is refused, the call is valid."""
    qwen.drafting.drafter = RandomDrafter(qwen.model.n_vocab)
    qwen.drafting.policy = AlwaysVerify()
    r = generate(qwen, START, tool_choice="required", enable_thinking=False, max_tokens=48)
    assert r.usage is not None and r.usage.drafted_tokens > r.usage.accepted_tokens
    assert r.finish is not None and r.finish.raw_text.lstrip().startswith("<tool_call>")
    assert np.abs(np.array(qwen.last_logits()) - replay_logits(qwen)).max() == 0.0


def test_progress_counts_each_token_once_drafted_or_held_back(
    qwen: LlamaBackend, qwen35_gguf: Path
) -> None:
    """`Decoded` says 1, 2, ... n for a reply of n tokens, a batch's accepted drafts
    included, and goes on counting while the parser holds a tool call's text back."""
    kw: dict[str, object] = {"tool_choice": "required", "enable_thinking": False}
    prompt_len, reference = reference_reply(qwen35_gguf, START, max_tokens=48, **kw)
    qwen.drafting.drafter = ScriptedDrafter(prompt_len, reference, qwen.model.n_vocab)
    qwen.drafting.policy = AlwaysVerify()
    settings = GenerationSettings(max_tokens=48, temperature=0.0, seed=1, **kw)  # type: ignore[arg-type]
    events = list(qwen.generate(START, [READ_TOOL], settings))
    out = Reply()
    for event in events:
        out.add(event)
    assert out.usage is not None and out.usage.accepted_tokens > 0
    counts = [e.tokens for e in events if isinstance(e, Decoded)]
    assert counts == list(range(1, out.usage.completion_tokens + 1))
    texts = [e for e in events if isinstance(e, ContentDelta | ReasoningDelta)]
    assert out.finish is not None and "<tool_call>" in out.finish.raw_text
    assert len(texts) < len(counts) // 2  # the call's tokens streamed no text, yet were counted


def test_the_setting_turns_drafting_off(qwen35_gguf: Path) -> None:
    from dataclasses import replace

    b = LlamaBackend(qwen35_gguf, replace(OPTIONS, speculative=False))
    try:
        b.drafting.drafter = RandomDrafter(b.model.n_vocab)  # never asked
        b.drafting.policy = AlwaysVerify()
        r = generate(b, START)
        assert r.usage is not None and r.usage.drafted_tokens == 0
        reply_calls = [n for start, n in b.transcript.schedule if start >= r.usage.prompt_tokens]
        assert reply_calls and all(n == 1 for n in reply_calls)
    finally:
        b.close()


COPY_SOURCE = "\n".join(
    f"def step_{i}(value: int) -> int:\n    return value * {i} + {i * 3}\n" for i in range(12)
)


def test_smollm2_copying_text_is_drafted_from_the_conversation(smollm2_gguf: Path) -> None:
    """Greedy SmolLM2 asked to repeat a file: the n-gram drafter proposes it, the model accepts."""
    messages = [
        Message("system", "You repeat files exactly."),
        Message("user", f"Here is a file:\n{COPY_SOURCE}\nWrite the same file again."),
    ]
    b = LlamaBackend(smollm2_gguf, OPTIONS)
    try:
        b.drafting.policy = AlwaysVerify()  # the drafter's proposals, not the cost model, on trial
        r = generate(b, messages, max_tokens=64, tools=[])
        assert r.usage is not None
        assert r.usage.accepted_tokens > 20
        assert np.abs(np.array(b.last_logits()) - replay_logits(b)).max() == 0.0
    finally:
        b.close()


def test_the_policy_drafts_only_when_it_pays() -> None:
    """Acceptance against the measured cost per batch size, with timings given, not measured."""
    policy = DraftPolicy()
    for _ in range(30):
        policy.timed(1, 0.010)
        policy.timed(9, 0.030)  # a batch of 9 costs 3 single steps (bandwidth-bound)
    for _ in range(10):
        policy.score(8, False)  # long copies accepted whole
    assert policy.acceptance > 0.9
    assert policy.length(16) >= 8
    for _ in range(40):
        policy.score(0, True)  # then every draft rejected at once
    assert policy.acceptance < 0.2
    assert policy.length(16) == 0
    compute_bound = DraftPolicy()
    for _ in range(30):
        compute_bound.timed(1, 0.010)
        compute_bound.timed(9, 0.090)  # verifying costs as much as the steps it could save
    for _ in range(10):
        compute_bound.score(3, True)
    assert compute_bound.length(8) == 0


def test_a_rejection_narrows_the_next_draft_until_a_proposal_comes_true() -> None:
    """After long copies acceptance is near 1, yet the first draft where the text stops
    repeating is rejected at once: the next one verified is short (what the rejected one
    got right), and a proposal that comes true whole widens the reach again."""
    policy = DraftPolicy()
    for _ in range(30):
        policy.timed(1, 0.010)
        policy.timed(5, 0.020)  # a batch of 5 costs 2 single steps
        policy.timed(17, 0.040)  # a batch of 17 costs 4
    for _ in range(10):
        policy.score(16, False)  # a long copy, accepted whole
    assert policy.length(16) == 16
    policy.score(0, True)  # prose: the next draft is rejected at its first token
    assert policy.acceptance > 0.8  # the average still says "copying"
    assert policy.length(16) <= 1
    # control: the same history without the rejection verifies the whole proposal
    control = DraftPolicy()
    for _ in range(30):
        control.timed(1, 0.010)
        control.timed(5, 0.020)
        control.timed(17, 0.040)
    for _ in range(11):
        control.score(16, False)
    assert control.length(16) == 16
    policy.score(3, True)  # a draft (or a proposal only scored) right for 3 tokens
    assert policy.length(16) <= 3
    policy.score(12, False)  # a proposal of 12 that came true whole
    assert policy.reach >= 12
    policy.score(16, False)
    assert policy.length(16) == 16


def after_a_slow_first_batch(accepted: int, rejected: bool, scores: int = 10) -> DraftPolicy:
    """A policy whose one timing of a 17-token batch took 50 single steps (llama.cpp
    allocating for the new size, not the batch's cost), then `scores` proposals scored."""
    policy = DraftPolicy()
    for _ in range(30):
        policy.timed(1, 0.010)
    policy.timed(17, 0.500)
    for _ in range(scores):
        policy.score(accepted, rejected)
    return policy


def test_one_slow_batch_does_not_stop_drafting_for_the_session() -> None:
    """A figure that says no draft pays would never be timed again. Proposals that keep
    being right get one verified anyway after `PROBE_AFTER` in a row, and a faster timing
    brings the figure down at once; a probe that still does not pay doubles the wait."""
    policy = after_a_slow_first_batch(16, False)  # the proposals are right
    waits = [policy.length(16) for _ in range(drafting.PROBE_AFTER)]
    assert waits[:-1] == [0] * (drafting.PROBE_AFTER - 1)  # stuck on the figure alone
    assert waits[-1] == 16  # the probe
    policy.timed(17, 0.040)  # what a batch of 17 really costs: 4 single steps
    assert policy.cost(17) <= 4 * drafting.SLOWER_BY
    assert policy.length(16) == 16  # drafting is back
    slow = after_a_slow_first_batch(16, False)
    assert [slow.length(16) for _ in range(drafting.PROBE_AFTER)][-1] == 16
    slow.timed(17, 0.400)  # still slow: the figure moves by the running average only
    assert slow.cost(17) > 40
    later = [slow.length(16) for _ in range(2 * drafting.PROBE_AFTER)]
    assert later.index(16) == 2 * drafting.PROBE_AFTER - 1  # the wait doubled
    # control: proposals that are mostly wrong are never probed
    wrong = after_a_slow_first_batch(1, True, scores=20)
    assert wrong.acceptance < drafting.PROBE_ACCEPTANCE
    assert all(wrong.length(16) == 0 for _ in range(4 * drafting.PROBE_AFTER))


def test_a_batch_costs_what_it_did_beside_the_steps_around_it() -> None:
    """Batch times are kept relative to the single steps of their stretch: steps that get
    faster later (a shorter context) leave a batch measured before just as cheap."""
    policy = DraftPolicy()
    for _ in range(30):
        policy.timed(1, 0.073)  # deep in a long context
        policy.timed(6, 0.240)
    for _ in range(10):
        policy.score(5, False)
    assert policy.cost(6) == pytest.approx(0.240 / 0.073, rel=0.01)
    deep = policy.length(5)
    assert deep > 0
    for _ in range(100):
        policy.timed(1, 0.033)  # a new reply, near the start of its context
    assert policy.cost(6) == pytest.approx(0.240 / 0.073, rel=0.01)
    assert policy.length(5) == deep
    # Control: a batch timed beside the faster steps costs more of them.
    for _ in range(30):
        policy.timed(6, 0.240)
    assert policy.cost(6) > 6


def measured_policy() -> DraftPolicy:
    """A policy whose figures say drafting 4 pays (a batch of 5 costs 2 single steps, about
    3 of 4 drafted tokens accepted)."""
    policy = DraftPolicy()
    for _ in range(30):
        policy.timed(1, 0.010)
        policy.timed(5, 0.020)
    for _ in range(10):
        policy.score(3, True)
    return policy


def test_drafting_stops_where_its_measured_cycles_do_not_pay() -> None:
    """Whatever the cost model says, drafting cycles that made tokens more slowly than plain
    steps stop drafting for a while (longer after each probe that still does not pay), and
    cycles that pay bring the short stop back."""
    policy = measured_policy()
    assert policy.length(4) > 0  # the model's figures say it pays
    for _ in range(5):
        policy.cycle(0, 1, 0.010)  # plain steps: 100 tokens/s
    for _ in range(drafting.PROBE_CYCLES):
        policy.cycle(4, 2, 0.040)  # drafting cycles: 50 tokens/s (a loaded machine, say)
    assert policy.realized == pytest.approx(0.5)
    assert policy.length(4) == 0 and policy.pauses == 1
    first = policy.paused
    assert first == drafting.PAUSE_FIRST
    for _ in range(first):
        assert policy.length(4) == 0
        policy.cycle(0, 1, 0.010)
    assert policy.length(4) > 0  # probed again
    for _ in range(drafting.PROBE_CYCLES):
        policy.cycle(4, 2, 0.040)
    assert policy.paused == 2 * first  # still not paying: a longer stop
    for _ in range(2 * first):
        policy.cycle(0, 1, 0.010)
    for _ in range(drafting.PROBE_CYCLES):
        policy.cycle(4, 4, 0.020)  # now it pays (200 tokens/s)
    assert policy.realized is not None and policy.realized > 1
    assert policy.paused == 0 and policy.length(4) > 0
    for _ in range(drafting.PROBE_CYCLES):
        policy.cycle(4, 1, 0.040)
    assert policy.paused == drafting.PAUSE_FIRST  # the stops start short again


def test_the_longest_stop_is_bounded() -> None:
    policy = measured_policy()
    policy.cycle(0, 1, 0.010)
    for _ in range(20):
        for _ in range(drafting.PROBE_CYCLES):
            policy.cycle(4, 1, 0.040)
        while policy.paused:
            policy.cycle(0, 1, 0.010)
    assert policy.pauses == 20
    for _ in range(drafting.PROBE_CYCLES):
        policy.cycle(4, 1, 0.040)
    assert policy.paused == drafting.PAUSE_MAX


def test_the_ngram_drafter_proposes_what_followed_and_follows_cuts() -> None:
    drafter = NgramDrafter()
    tokens = [5, 6, 7, 8, 9, 10, 1, 2, 5, 6, 7]
    assert drafter.propose(tokens, 3) == [8, 9, 10]
    assert drafter.propose([*tokens, 8], 2) == [9, 10]
    assert drafter.propose([1, 2, 3], 4) == []
    cut = [5, 6, 1, 5, 6]  # a shorter transcript (an earlier turn): the index starts over
    assert drafter.propose(cut, 4) == [1, 5, 6]


NEAR_TIE_PROMPTS = [
    "Explain in two sentences why the sky is blue.",
    "Write a short poem about a frog on a laptop.",
    "List three uses of a hash map, briefly.",
    "What is the difference between a process and a thread?",
]


def drafted_prose(path: Path, prompt: str, backend: LlamaBackend) -> tuple[list[int], list[int]]:
    """The greedy reply to `prompt` without drafting, and with every step drafted and
    verified in batches (drafts of the reference itself, some with a wrong token)."""
    messages = [Message("system", "You are a helpful assistant."), Message("user", prompt)]
    prompt_len, reference = reference_reply(path, messages, max_tokens=64, tools=[])
    backend.drafting.drafter = ScriptedDrafter(prompt_len, reference, backend.model.n_vocab)
    backend.drafting.policy = AlwaysVerify()
    generate(backend, messages, max_tokens=64, tools=[])
    return reference, list(backend.transcript.tokens[prompt_len:])


def top_two_gap(backend: LlamaBackend, position: int) -> float:
    """The gap between the two largest logits the backend sampled `position` from, over the
    row's largest |logit|, made again with the backend's own decode calls."""
    t = backend.transcript
    fresh = LlamaContext(backend.model, OPTIONS)
    try:
        pos = 0
        for start, count in t.schedule:
            if pos >= position:
                break
            assert start == pos
            fresh.decode(t.tokens[start : start + count], start)
            pos += count
        assert pos == position
        logits = np.array(fresh.logits())
        top = np.sort(logits)[-2:]
        return float((top[1] - top[0]) / np.abs(logits).max())
    finally:
        fresh.close()


ROUNDING_BOUND = 0.04
"""How far batch rounding moves a top-two gap, over the row's largest |logit| (2.2% to 2.9%
measured on SmolLM2 Q4_1 by bench/verify_rounding.py; bench/speculative.py measures it
again as `rounding_bound`)."""


def test_greedy_replies_with_drafts_differ_only_at_near_ties(smollm2_gguf: Path) -> None:
    """SmolLM2 prose (many near-ties) with every step verified in batches: each reply
    equals the one made without drafting, or first differs where that reply's top two
    logits were within the batch-rounding bound."""
    plain = LlamaBackend(smollm2_gguf, replace(OPTIONS, speculative=False))
    b = LlamaBackend(smollm2_gguf, OPTIONS)
    try:
        for prompt in NEAR_TIE_PROMPTS:
            messages = [Message("system", "You are a helpful assistant."), Message("user", prompt)]
            r = generate(plain, messages, max_tokens=64, tools=[])
            assert r.usage is not None
            prompt_len = r.usage.prompt_tokens
            reference = list(
                plain.transcript.tokens[prompt_len : prompt_len + r.usage.completion_tokens]
            )
            b.drafting.drafter = ScriptedDrafter(prompt_len, reference, b.model.n_vocab)
            b.drafting.policy = AlwaysVerify()
            d = generate(b, messages, max_tokens=64, tools=[])
            assert d.usage is not None and d.usage.drafted_tokens > 0
            drafted = list(b.transcript.tokens[prompt_len : prompt_len + d.usage.completion_tokens])
            if drafted != reference:
                pairs = enumerate(zip(reference, drafted, strict=False))
                at = next((i for i, (x, y) in pairs if x != y), min(len(reference), len(drafted)))
                assert top_two_gap(plain, prompt_len + at) <= ROUNDING_BOUND, prompt
    finally:
        b.close()
        plain.close()


def test_greedy_replies_are_drafted(smollm2_gguf: Path) -> None:
    """Greedy replies are drafted like sampled ones (verification-exact, see
    ReplyRun._decode_loop): a copying reply is drafted at temperature 0 and at 0.6."""
    messages = [
        Message("system", "You repeat files exactly."),
        Message("user", f"Here is a file:\n{COPY_SOURCE}\nWrite the same file again."),
    ]
    b = LlamaBackend(smollm2_gguf, OPTIONS)
    try:
        greedy = generate(b, messages, max_tokens=64, tools=[])
        assert greedy.usage is not None and greedy.usage.drafted_tokens > 0
        sampled = generate(b, messages, max_tokens=64, tools=[], temperature=0.6, seed=3)
        assert sampled.usage is not None and sampled.usage.drafted_tokens > 0
    finally:
        b.close()


def test_a_later_turn_reads_on_from_the_drafted_cache(smollm2_gguf: Path) -> None:
    """A greedy reply verified in batches keeps its batch-made cache for the next turn (no
    decoding again alone), and that turn's logits are those of replaying the decode calls
    the schedule records on a fresh context."""
    first = [
        Message("system", "You repeat files exactly."),
        Message("user", f"Here is a file:\n{COPY_SOURCE}\nWrite the same file again."),
    ]
    b = LlamaBackend(smollm2_gguf, OPTIONS)
    try:
        prompt_len, reply_tokens = reference_reply(smollm2_gguf, first, max_tokens=48, tools=[])
        b.drafting.drafter = ScriptedDrafter(prompt_len, reply_tokens, b.model.n_vocab)
        b.drafting.policy = AlwaysVerify()
        drafted = generate(b, first, max_tokens=48, tools=[])
        assert drafted.usage is not None and drafted.usage.accepted_tokens > 0
        second = [*first, Message("assistant", drafted.content), Message("user", "Shorter.")]
        b.drafting.policy = DraftPolicy()
        again = generate(b, second, max_tokens=24, tools=[])
        assert again.usage is not None and again.usage.reused_tokens > prompt_len
        reused = again.usage.reused_tokens
        kept = [n for start, n in b.transcript.schedule if prompt_len <= start < reused]
        assert max(kept) > 1, "the kept reply tokens were not decoded again alone"
        assert np.abs(np.array(b.last_logits()) - replay_logits(b)).max() == 0.0
    finally:
        b.close()


def test_the_ngram_drafter_follows_the_occurrence_being_copied() -> None:
    """Of several places an n-gram occurred, the one whose preceding tokens agree longest."""
    drafter = NgramDrafter()
    # Two lines start alike (9, 9, 9, 9) and end differently; the copy is of the first one.
    tokens = [1, 2, 9, 9, 9, 9, 3, 4, 7, 5, 9, 9, 9, 9, 6, 6, 7, 1, 2, 9, 9, 9, 9]
    assert drafter.propose(tokens, 2) == [3, 4]
    # The newest occurrence wins when nothing before the n-gram tells them apart.
    assert NgramDrafter().propose([8, 9, 9, 9, 9, 3, 4, 8, 9, 9, 9, 9, 6, 6, 8, 9, 9, 9, 9], 2) == [
        6,
        6,
    ]


def test_the_ngram_drafter_drafts_from_remembered_text() -> None:
    """Text given with `remember` is proposed from; a match never runs into the next text."""
    drafter = NgramDrafter()
    drafter.remember([10, 11, 12, 13, 14])
    drafter.remember([20, 21, 22])
    assert drafter.propose([99, 98, 10, 11, 12], 5) == [13, 14]
    assert drafter.propose([97, 20, 21], 4) == [22]
    assert drafter.propose([97, 13, 14], 4) == []  # 14 ends its text


def test_a_numbered_listing_gives_its_plain_lines() -> None:
    from frogdesk.engine.llama.speculative.listing import unnumbered

    read = "calc.py\n1. def f(x):\n2.     return x\n3. \n4. y = f(2)"
    assert unnumbered(read) == "def f(x):\n    return x\n\ny = f(2)"
    assert unnumbered("src/a.py\n7. a\n8. b\n9. c\n[truncated 10 chars]") == "a\nb\nc"
    assert unnumbered("1. one\n3. skipped\n4. four") is None  # not counting up by one
    assert unnumbered("plain text\nwith lines") is None


def test_files_read_with_numbers_reach_the_drafter_without_them(smollm2_gguf: Path) -> None:
    """A tool result with a numbered listing: the drafter proposes the file's plain lines."""
    b = LlamaBackend(smollm2_gguf, OPTIONS)
    try:
        source = COPY_SOURCE.split("\n")
        listing = "calc.py\n" + "\n".join(f"{i}. {line}" for i, line in enumerate(source, 1))
        messages = [*START, Message("tool", listing, tool_call_id="1", name="Read")]
        generate(b, messages, max_tokens=1, tools=[])
        full = b.model.tokenize(COPY_SOURCE)
        query = b.model.tokenize("\n".join(source[:2]))
        assert full[: len(query)] == query
        proposal = b.drafting.drafter.propose([*b.transcript.tokens, *query], 8)
        assert len(proposal) >= 2
        assert proposal == full[len(query) : len(query) + len(proposal)]
        # Control: from the transcript alone, the numbers of the listing come next.
        bare = NgramDrafter().propose([*b.transcript.tokens, *query], 8)
        assert bare[: len(proposal)] != proposal
    finally:
        b.close()


def test_an_unambiguous_drafter_stops_where_equally_good_places_part() -> None:
    """Lines alike but for a number: equally agreeing places are followed only as far as they
    continue alike; a single best place is followed as before."""
    # "x = N ;" three times, then "x =": every earlier line agrees as far back as the last.
    tokens = [7, 1, 2, 30, 3, 7, 1, 2, 31, 3, 7, 1, 2, 32, 3, 7, 1, 2]
    assert NgramDrafter().propose(tokens, 3) == [32, 3, 7]  # control: the newest, number and all
    assert NgramDrafter(unambiguous=True).propose(tokens, 3) == []
    # After the number the lines agree again: the rest of the line is drafted.
    assert NgramDrafter(unambiguous=True).propose([*tokens, 33, 3, 7, 1], 3) == [2]
    # The places agree on a longer stretch before they part.
    same_start = [0, 5, 6, 8, 9, 40, 0, 5, 6, 8, 9, 41, 0, 5, 6]
    assert NgramDrafter(unambiguous=True).propose(same_start, 4) == [8, 9]
    # One place agreeing longest (a copy in progress) is followed whole.
    copied = [4, 7, 1, 2, 30, 3, 5, 7, 1, 2, 31, 3, 4, 7, 1, 2]
    assert NgramDrafter(unambiguous=True).propose(copied, 3) == [30, 3, 5]
