"""The MTP (NextN) drafter on real llama.cpp, on a tiny qwen35 GGUF that carries an MTP block."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import llama_cpp
import numpy as np
import pytest

from frogdesk.engine.chat import GenerationSettings, Message, Reply
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.load.model import LlamaModel
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.llama.speculative.choice import DrafterChoice
from frogdesk.engine.llama.speculative.drafting import DraftPolicy
from frogdesk.engine.llama.speculative.mtp import mtp_unavailable
from frogdesk.engine.llama.speculative.nextn import load_nextn, nextn_layers
from frogdesk.models.memory import MTP_UBATCH
from tests.engine.llama.test_speculative import READ_TOOL, START, replay_logits

pytestmark = pytest.mark.llama

OPTIONS = LlamaOptions(n_ctx=4096, n_threads=2, n_batch=64)


@pytest.fixture
def mtp_backend(mtp_gguf: Path) -> Iterator[LlamaBackend]:
    b = LlamaBackend(mtp_gguf, OPTIONS)
    yield b
    b.close()


class AlwaysVerify(DraftPolicy):
    """Verifies every proposal whatever it costs."""

    def length(self, available: int) -> int:
        """All of them."""
        return min(available, self.max_draft)


class AlwaysVerifyChoice(DrafterChoice):
    """The choice among drafters, verifying whatever the chosen one proposes."""

    def length(self, available: int) -> int:
        """All of them."""
        return min(available, self.max_draft)


def generate(backend: LlamaBackend, messages: list[Message], **kw: object) -> Reply:
    out = Reply()
    tools = kw.pop("tools", [])
    settings = GenerationSettings(**{"max_tokens": 32, "temperature": 0.0, "seed": 1, **kw})  # type: ignore[arg-type]
    for event in backend.generate(messages, tools, settings):  # type: ignore[arg-type]
        out.add(event)
    assert out.finish is not None and out.usage is not None
    return out


def reference_tokens(path: Path, messages: list[Message], **kw: object) -> list[int]:
    """The reply's tokens with drafting off (the MTP block is then not even loaded)."""
    b = LlamaBackend(path, replace(OPTIONS, speculative=False))
    try:
        assert b.drafting.mtp is None and not b.model.mtp_loaded
        r = generate(b, messages, **kw)
        assert r.usage is not None and r.usage.drafted_tokens == 0
        return list(b.transcript.tokens[r.usage.prompt_tokens :])
    finally:
        b.close()


def test_the_generated_gguf_loads_with_and_without_its_mtp_block(mtp_gguf: Path) -> None:
    for load_mtp in (False, True):
        model = LlamaModel(mtp_gguf, OPTIONS, load_mtp=load_mtp)
        try:
            assert nextn_layers(model.header) == 1
            assert model.mtp_loaded is load_mtp
            assert int(llama_cpp.llama_model_n_layer_nextn(model.handle)) == 1
            reason = mtp_unavailable(model)
            assert (reason == "") is load_mtp, reason
        finally:
            model.close()


class NoSymbols:
    """A shared library that exports nothing."""

    def __getattr__(self, name: str) -> object:
        raise AttributeError(name)


def test_the_nextn_symbols_are_found_and_a_missing_one_is_named() -> None:
    assert not isinstance(load_nextn(), str)
    reason = load_nextn(NoSymbols())
    assert isinstance(reason, str) and "set_embeddings_nextn" in reason


def test_without_the_nextn_calls_the_mtp_gguf_drafts_without_mtp(
    mtp_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A libllama without the NextN symbols: MTP off with the reason, the model still replies."""
    import frogdesk.engine.llama.speculative.mtp as mtp_module

    monkeypatch.setattr(mtp_module, "load_nextn", lambda: load_nextn(NoSymbols()))
    b = LlamaBackend(mtp_gguf, OPTIONS)
    try:
        assert b.drafting.mtp is None and not isinstance(b.drafting.drafter, DrafterChoice)
        assert b.drafting.mtp_status.startswith("off: libllama has no set_embeddings_nextn")
        r = generate(b, START, max_tokens=8)
        assert r.finish is not None and r.finish.reason in ("stop", "length")
    finally:
        b.close()


SETTINGS = {
    "greedy": {},
    "sampled": {"temperature": 0.6, "seed": 9},
    "forced tool call": {
        "tools": [READ_TOOL],
        "tool_choice": "required",
        "enable_thinking": False,
        "max_tokens": 48,
    },
}


@pytest.mark.parametrize("kind", list(SETTINGS))
def test_mtp_drafts_are_verified_and_the_output_is_the_models_own(
    mtp_backend: LlamaBackend, mtp_gguf: Path, kind: str
) -> None:
    """Every MTP proposal verified: the same tokens as without drafting, no trace left.

    Greedy, sampled (the sampler draws once per emitted token, as without drafting) and
    under the tool-call grammar (a drafted token the grammar refuses is a rejected draft).
    """
    assert mtp_backend.drafting.mtp_status == "on" and mtp_backend.drafting.mtp is not None
    kw = SETTINGS[kind]
    reference = reference_tokens(mtp_gguf, START, **kw)
    mtp_backend.drafting.drafter, mtp_backend.drafting.policy = (
        mtp_backend.drafting.mtp,
        AlwaysVerify(),
    )
    r = generate(mtp_backend, START, **kw)
    assert r.usage is not None
    assert r.usage.drafted_tokens > 0, "the MTP head proposed tokens and they were verified"
    assert mtp_backend.last_drafts.by_drafter["mtp"][0] == r.usage.drafted_tokens
    assert mtp_backend.drafting.mtp.mirrored >= r.usage.prompt_tokens, "the draft context followed"
    assert not mtp_backend.drafting.mtp.failed
    assert list(mtp_backend.transcript.tokens[r.usage.prompt_tokens :]) == reference
    ours = np.array(mtp_backend.last_logits())
    assert np.abs(ours - replay_logits(mtp_backend)).max() == 0.0
    if kind == "forced tool call":
        assert r.finish is not None and r.finish.raw_text.lstrip().startswith("<tool_call>")


def test_after_rejected_drafts_the_head_drafts_as_after_a_clean_prefill(
    mtp_backend: LlamaBackend, mtp_gguf: Path
) -> None:
    """The draft context drops rejected positions and pairs each token with the right state.

    After a reply whose every draft was verified (and rejected, on random weights), the next
    draft equals the one a fresh backend makes from the same tokens decoded in one go.
    """
    mtp = mtp_backend.drafting.mtp
    assert mtp is not None
    mtp_backend.drafting.drafter, mtp_backend.drafting.policy = mtp, AlwaysVerify()
    r = generate(mtp_backend, START)
    assert r.usage is not None and r.usage.drafted_tokens > r.usage.accepted_tokens
    t = mtp_backend.transcript
    tokens = list(t.tokens[: t.n_past + 1])  # up to the newest token not yet decoded
    after_reply = mtp.propose(tokens, 4)
    fresh = LlamaBackend(mtp_gguf, OPTIONS)
    try:
        assert fresh.drafting.mtp is not None
        fresh.context.decode(tokens[:-1], 0)
        assert fresh.drafting.mtp.propose(tokens, 4) == after_reply
        assert len(after_reply) == 4
    finally:
        fresh.close()


def test_the_draft_context_follows_a_prefill_batch_larger_than_its_own(mtp_gguf: Path) -> None:
    """A 512-token prefill batch reaches the draft context in pieces of MTP_UBATCH (its
    compute buffer stays small at long contexts); it drafts as one fed in pieces that size."""
    words = " ".join(f"word{i}" for i in range(120))
    drafts = []
    for n_batch in (512, MTP_UBATCH):
        b = LlamaBackend(mtp_gguf, replace(OPTIONS, n_batch=n_batch))
        try:
            assert b.drafting.mtp is not None
            prompt = b.model.tokenize(words)
            assert len(prompt) > 2 * MTP_UBATCH and len(prompt) % MTP_UBATCH > 1
            b.context.decode(prompt, 0)
            assert b.drafting.mtp.mirrored == len(prompt) and not b.drafting.mtp.failed
            drafts.append(b.drafting.mtp.propose([*prompt, 42], 4))
        finally:
            b.close()
    assert len(drafts[0]) == 4 and drafts[0] == drafts[1]


def test_the_mtp_head_predicts_from_the_targets_hidden_state(mtp_backend: LlamaBackend) -> None:
    """Positive control: the draft follows the target's state, not only the last token."""
    mtp = mtp_backend.drafting.mtp
    assert mtp is not None
    model = mtp_backend.model
    a = model.tokenize("<|im_start|>user\nhello there, model<|im_end|>\n")
    b = model.tokenize("<|im_start|>user\nwrite a file, please<|im_end|>\n")
    drafts = []
    for prompt in (a, b):
        mtp_backend.context.clear()
        mtp_backend.context.decode(prompt, 0)
        drafts.append(mtp.propose([*prompt, 42], 4))
    assert len(drafts[0]) == 4 and len(drafts[1]) == 4
    assert drafts[0] != drafts[1]


def test_the_choice_counts_each_drafter_and_keeps_the_output(
    mtp_backend: LlamaBackend, mtp_gguf: Path
) -> None:
    """n-gram and MTP behind one choice: proposals counted per drafter, output unchanged."""
    messages = [
        Message("system", "You repeat text."),
        Message("user", "one two three four five six one two three four five six one two"),
    ]
    reference = reference_tokens(mtp_gguf, messages, max_tokens=48)
    assert mtp_backend.drafting.mtp is not None
    choice = AlwaysVerifyChoice(
        [mtp_backend.drafting.drafter, mtp_backend.drafting.mtp], rollback_redecodes=True
    )
    mtp_backend.drafting.drafter = mtp_backend.drafting.policy = choice
    r = generate(mtp_backend, messages, max_tokens=48)
    assert r.usage is not None
    counts = mtp_backend.last_drafts.by_drafter
    assert "mtp" in counts and counts["mtp"][0] > 0
    assert sum(c[0] for c in counts.values()) == r.usage.drafted_tokens
    assert list(mtp_backend.transcript.tokens[r.usage.prompt_tokens :]) == reference
    assert 0.0 <= choice.acceptance_of("mtp") <= 1.0


class Collect(logging.Handler):
    """Keeps the messages logged to one logger (which may not propagate to the root)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_a_gguf_without_an_mtp_block_drafts_without_it_and_says_why(qwen35_gguf: Path) -> None:
    logger, collect = logging.getLogger("frogdesk.llama"), Collect()
    level = logger.level
    logger.addHandler(collect)
    logger.setLevel(logging.INFO)
    try:
        b = LlamaBackend(qwen35_gguf, OPTIONS)
    finally:
        logger.removeHandler(collect)
        logger.setLevel(level)
    try:
        assert b.drafting.mtp is None
        assert b.drafting.mtp_status.startswith("off: no MTP layer in the GGUF")
        assert f"MTP drafting {b.drafting.mtp_status}" in collect.messages
        assert not isinstance(b.drafting.drafter, DrafterChoice)
        r = generate(b, START)
        assert r.finish is not None and r.finish.reason in ("stop", "length")
        assert "mtp" not in b.last_drafts.by_drafter
    finally:
        b.close()


def test_the_choice_prefers_the_drafter_that_was_right() -> None:
    """Scored against what followed: the drafter that guessed right is asked first."""

    class Fixed:
        def __init__(self, name: str, guess: int) -> None:
            self.name, self.guess = name, guess
            self.max_draft = 16

        def propose(self, tokens: Sequence[int], limit: int) -> list[int]:
            return [self.guess] * limit

    right, wrong = Fixed("right", 7), Fixed("wrong", 8)
    choice = DrafterChoice([wrong, right])
    choice.timed(1, 1.0)
    choice.timed(3, 1.0)  # batches cost no more than one step: drafting pays
    tokens = [1, 2, 3]
    for _ in range(20):
        proposal = choice.propose(tokens, 2)
        tokens.append(7)  # what the model "sampled"
        if proposal:
            tokens.extend([7] * (len(proposal) - 1))
    assert choice.name == "right"
    assert choice.acceptance_of("right") > 0.9
    assert choice.acceptance_of("wrong") < 0.5  # below the prior: it was scored wrong
    assert len(choice.propose(tokens, 8)) > 1
    right.max_draft = 1  # a drafter's own cap is kept
    assert choice.propose(tokens, 8) == [7]
