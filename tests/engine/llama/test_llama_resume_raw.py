"""A conversation carried into a fresh backend with each reply's raw reply reads the generated tokens."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest

from frogdesk.engine.chat import GenerationSettings, Message, Reply, ToolCall
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.load.options import LlamaOptions

pytestmark = pytest.mark.llama

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "Read",
            "description": "Read a text file. Returns numbered lines.",
            "parameters": {
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "Path to the file to read."},
                },
                "required": ["file_path"],
            },
        },
    }
]
START = [
    Message("system", "You are a software-engineering agent working in a checked-out repository."),
    Message("user", "Fix the failing test in calc.py."),
]


def observation(turn: int) -> Message:
    """A tool result, different every turn."""
    return Message("tool", f"calc.py\n1. total = {turn} + value\n2. return total  ")


@dataclass
class Turn:
    """One generated reply and where its sampled tokens lie in the original transcript."""

    reply: Reply
    start: int
    """Position of the first sampled token."""
    count: int
    """Sampled tokens that are text (the end-of-turn token excluded)."""


@dataclass
class Original:
    """The conversation a backend generated, with and without the raw replies."""

    with_raw: list[Message]
    """Raw text and sampled tokens, as a resumed session has them."""
    text_only: list[Message]
    """Raw text without the tokens (another vocabulary, or a transcript without them)."""
    parsed: list[Message]
    turns: list[Turn]
    tokens: list[int]
    schedule: list[tuple[int, int]]
    logits: np.ndarray


def generate(backend: LlamaBackend, messages: list[Message], **kw: object) -> Reply:
    """One reply to the end."""
    out = Reply()
    settings = GenerationSettings(**{"max_tokens": 14, "seed": 3, **kw})  # type: ignore[arg-type]
    for event in backend.generate(messages, TOOLS, settings):
        out.add(event)
    assert out.finish is not None and out.usage is not None
    return out


def as_message(r: Reply) -> Message:
    """The assistant message the loop builds from a reply, with the raw text a resume restores."""
    calls = tuple(ToolCall(c.name, c.arguments, id=f"c{i}") for i, c in enumerate(r.tool_calls))
    assert r.finish is not None
    f = r.finish
    return Message(
        "assistant", r.content, r.reasoning, calls, raw=f.raw_text, raw_tokens=f.raw_tokens
    )


def run_original(path: Path, turns: int, *, thinking: bool = True) -> Original:
    """Generate `turns` replies in one backend, then prefill one more tool result."""
    b = LlamaBackend(path, LlamaOptions(n_ctx=4096, n_threads=2, n_batch=64))
    try:
        messages = list(START)
        record: list[Turn] = []
        for turn in range(turns):
            r = generate(b, messages, seed=turn, enable_thinking=thinking)
            assert r.usage is not None and r.finish is not None
            assert r.usage.completion_tokens > 0
            eog = 1 if r.finish.reason in ("stop", "tool_calls") else 0
            record.append(Turn(r, r.usage.prompt_tokens, r.usage.completion_tokens - eog))
            messages += [as_message(r), observation(turn)]
        generate(b, messages, max_tokens=0, enable_thinking=thinking)
        t = b.transcript
        assert t.n_past == len(t.tokens)
        text_only = [replace(m, raw_tokens=()) for m in messages]
        parsed = [replace(m, raw="", raw_tokens=()) for m in messages]
        logits = np.array(b.last_logits())
        tokens, schedule = list(t.tokens), list(t.schedule)
        return Original(messages, text_only, parsed, record, tokens, schedule, logits)
    finally:
        b.close()


def resumed_expectation(backend: LlamaBackend, original: Original) -> list[int]:
    """The original tokens with each reply's sampled tokens replaced by its raw text's tokens."""
    out: list[int] = []
    pos = 0
    for turn in original.turns:
        assert turn.reply.finish is not None
        out += original.tokens[pos : turn.start]
        out += backend.model.tokenize(turn.reply.finish.raw_text)
        pos = turn.start + turn.count
    return out + original.tokens[pos:]


def replay(backend: LlamaBackend, tokens: list[int], schedule: list[tuple[int, int]]) -> np.ndarray:
    """Logits of a fresh context fed `tokens` with the decode calls of `schedule`."""
    fresh = LlamaContext(backend.model, LlamaOptions(n_ctx=4096, n_threads=2, n_batch=64))
    try:
        pos = 0
        for start, count in schedule:
            assert start == pos
            fresh.decode(tokens[start : start + count], start)
            pos += count
        assert pos == len(tokens)
        return np.array(fresh.logits())
    finally:
        fresh.close()


@pytest.fixture(scope="module")
def smollm2_original(smollm2_gguf: Path) -> Original:
    """Three turns of SmolLM2."""
    return run_original(smollm2_gguf, 3)


@pytest.fixture(scope="module")
def qwen35_original(qwen35_gguf: Path) -> Original:
    """Three turns of the tiny hybrid model."""
    return run_original(qwen35_gguf, 3)


@pytest.fixture
def smollm2(smollm2_gguf: Path) -> Iterator[LlamaBackend]:
    """A fresh SmolLM2 backend (a new process would have this one)."""
    b = LlamaBackend(smollm2_gguf, LlamaOptions(n_ctx=4096, n_threads=2, n_batch=64))
    yield b
    b.close()


@pytest.fixture
def qwen35(qwen35_gguf: Path) -> Iterator[LlamaBackend]:
    """A fresh tiny-qwen35 backend."""
    b = LlamaBackend(qwen35_gguf, LlamaOptions(n_ctx=4096, n_threads=2, n_batch=64))
    yield b
    b.close()


@pytest.mark.parametrize("name", ["smollm2", "qwen35"])
def test_resumed_with_raw_reads_exactly_the_generated_tokens(
    name: str, request: pytest.FixtureRequest
) -> None:
    backend: LlamaBackend = request.getfixturevalue(name)
    original: Original = request.getfixturevalue(f"{name}_original")
    for turn, message in zip(original.turns, original.with_raw[2::2], strict=True):
        assert message.raw_tokens == tuple(original.tokens[turn.start : turn.start + turn.count])
    generate(backend, original.with_raw, max_tokens=0)
    t = backend.transcript
    assert t.tokens == original.tokens
    ours = np.array(backend.last_logits())
    assert np.abs(ours - replay(backend, t.tokens, t.schedule)).max() == 0.0
    # With the original's decode calls the resumed tokens give the original's logits exactly;
    # with its own (bigger batches) only kernel rounding may differ, never a token.
    assert np.abs(original.logits - replay(backend, t.tokens, original.schedule)).max() == 0.0
    assert int(np.argmax(ours)) == int(np.argmax(original.logits))


def test_prefill_then_generate_after_a_resume_reads_only_the_generation_prompt(
    qwen35: LlamaBackend, qwen35_original: Original
) -> None:
    """A quant switch or a resume prefills first; the next reply then reuses all of it."""
    original = qwen35_original
    assert qwen35.model.is_hybrid
    evaluated = qwen35.prefill(original.with_raw, TOOLS)
    r = generate(qwen35, original.with_raw, max_tokens=0)
    assert r.usage is not None
    assert r.usage.reused_tokens == evaluated
    assert evaluated + r.usage.evaluated_tokens == len(original.tokens)
    assert qwen35.transcript.tokens == original.tokens


SPELLED_REPLY = "Let me read the file first."
"""A reply whose tokens are given one character each: never the tokenizer's own split."""


def spelled(backend: LlamaBackend, text: str) -> list[int]:
    """`text` as one token per character (a split a model may sample, the tokenizer never makes)."""
    return [token for char in text for token in backend.model.tokenize(char)]


@pytest.mark.parametrize("name", ["smollm2", "qwen35"])
def test_raw_text_alone_differs_only_inside_replies_not_sampled_canonically(
    name: str, request: pytest.FixtureRequest
) -> None:
    """Without the token ids the raw text is tokenized; every token around the replies matches.

    A model does not always sample the tokenizer's split of its own text (SmolLM2 sampled
    "\n" twice where the tokenizer has one "\n\n"). Whether the generated replies show it
    depends on what was sampled, so one more reply is sampled off the split on purpose.
    """
    backend: LlamaBackend = request.getfixturevalue(name)
    original: Original = request.getfixturevalue(f"{name}_original")
    spelled_ids = spelled(backend, SPELLED_REPLY)
    assert spelled_ids != backend.model.tokenize(SPELLED_REPLY)
    reply = Message("assistant", SPELLED_REPLY, raw=SPELLED_REPLY, raw_tokens=tuple(spelled_ids))
    with_raw = [*original.with_raw, reply, observation(9)]
    text_only = [replace(m, raw_tokens=()) for m in with_raw]

    generate(backend, with_raw, max_tokens=0)
    sampled = list(backend.transcript.tokens)
    assert sampled[: len(original.tokens)] == original.tokens
    start = len(original.tokens)
    assert sampled[start : start + len(spelled_ids)] == spelled_ids

    other = LlamaBackend(backend.model.path, backend.options)
    try:
        generate(other, text_only, max_tokens=0)
        tokenized = other.transcript.tokens
    finally:
        other.close()
    turns = [(t.start, t.count, t.reply.finish.raw_text if t.reply.finish else "")
             for t in original.turns] + [(start, len(spelled_ids), SPELLED_REPLY)]  # fmt: skip
    expected: list[int] = []
    pos = 0
    for first, count, text in turns:
        expected += sampled[pos:first] + backend.model.tokenize(text)
        pos = first + count
    expected += sampled[pos:]
    assert tokenized == expected
    assert tokenized != sampled
    assert backend.model.detokenize(tokenized) == backend.model.detokenize(sampled)


def test_token_ids_of_another_vocabulary_fall_back_to_the_raw_text(
    qwen35: LlamaBackend, qwen35_original: Original
) -> None:
    original = qwen35_original
    wrong = [
        replace(m, raw_tokens=tuple(t + 1 for t in m.raw_tokens))
        if i % 4 == 0
        else replace(m, raw_tokens=(qwen35.model.n_vocab + 5, *m.raw_tokens))
        for i, m in enumerate(original.with_raw)
    ]
    generate(qwen35, wrong, max_tokens=0)
    assert qwen35.transcript.tokens == resumed_expectation(qwen35, original)


def test_without_raw_the_resumed_tokens_differ(
    qwen35: LlamaBackend, qwen35_original: Original
) -> None:
    """Why raw exists: the template re-renders reasoning and content, trimmed."""
    original = qwen35_original
    generate(qwen35, original.parsed, max_tokens=0)
    plain = qwen35.transcript.tokens
    text = qwen35.model.detokenize(plain)
    assert text == qwen35.template.render(original.parsed, TOOLS, add_generation_prompt=True)
    assert text != qwen35.model.detokenize(original.tokens)
    assert plain != original.tokens


def test_raw_takes_no_part_in_comparing_messages(
    qwen35: LlamaBackend, qwen35_original: Original
) -> None:
    """A conversation sent back with or without raw is the same conversation: nothing re-read."""
    original = qwen35_original
    generate(qwen35, original.with_raw, max_tokens=0)
    n_past = qwen35.transcript.n_past
    again = generate(qwen35, original.parsed, max_tokens=0)
    assert again.usage is not None
    # As any retry of a turn: back to the turn boundary, only the generation prompt is re-read.
    prompt = len(qwen35.model.tokenize("<|im_start|>assistant\n<think>\n"))
    assert again.usage.evaluated_tokens == prompt
    assert again.usage.reused_tokens == n_past - prompt
    assert qwen35.transcript.n_past == n_past
    assert original.with_raw == original.parsed


def test_thinking_off_replies_are_written_back_after_the_empty_think_block(
    qwen35_gguf: Path,
) -> None:
    original = run_original(qwen35_gguf, 2, thinking=False)
    b = LlamaBackend(qwen35_gguf, LlamaOptions(n_ctx=4096, n_threads=2, n_batch=64))
    try:
        generate(b, original.with_raw, max_tokens=0, enable_thinking=False)
        assert b.transcript.tokens == original.tokens
        assert "<think>\n\n</think>\n\n" in b.model.detokenize(b.transcript.tokens)
    finally:
        b.close()


def test_a_raw_reply_that_does_not_fit_the_prompt_is_rendered_instead(
    qwen35: LlamaBackend,
) -> None:
    """A reply written with thinking on, resumed with thinking off: the template renders it."""
    reply = Message("assistant", "Done.", "look", raw="look</think>\n\nDone.")
    messages = [*START, reply, Message("user", "thanks")]
    generate(qwen35, messages, max_tokens=0, enable_thinking=False)
    text = qwen35.model.detokenize(qwen35.transcript.tokens)
    assert text == qwen35.template.render(
        messages, TOOLS, add_generation_prompt=True, enable_thinking=False
    )


def test_count_tokens_counts_raw_replies_as_written_back(
    qwen35: LlamaBackend, qwen35_original: Original
) -> None:
    assert qwen35.count_tokens(qwen35_original.with_raw, TOOLS) == len(qwen35_original.tokens)
