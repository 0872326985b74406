"""Invariant 4 on real llama.cpp: per turn only new tokens are decoded, and the state is exact."""

from __future__ import annotations

from collections.abc import Iterator
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
                    "offset": {"type": "integer", "description": "Optional 1-based starting line."},
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
    lines = "\n".join(f"{i}. value_{turn}_{i} = compute({i}, {turn})" for i in range(1, 9))
    return Message("tool", f"calc.py\n{lines}")


@pytest.fixture(params=["qwen35", "smollm2"])
def model_path(request: pytest.FixtureRequest) -> Path:
    """Both test models: the hybrid tiny qwen35 and the plain transformer SmolLM2."""
    name = "qwen35_gguf" if request.param == "qwen35" else "smollm2_gguf"
    path: Path = request.getfixturevalue(name)
    return path


@pytest.fixture
def backend(model_path: Path) -> Iterator[LlamaBackend]:
    """A backend with small batches so prefills span several decode calls."""
    b = LlamaBackend(model_path, LlamaOptions(n_ctx=4096, n_threads=2, n_batch=64))
    yield b
    b.close()


def reply(backend: LlamaBackend, messages: list[Message], **kw: object) -> Reply:
    """Run one reply to the end."""
    out = Reply()
    settings = GenerationSettings(**{"max_tokens": 12, "seed": 7, **kw})  # type: ignore[arg-type]
    for event in backend.generate(messages, TOOLS, settings):
        out.add(event)
    assert out.finish is not None and out.usage is not None
    return out


def as_message(r: Reply) -> Message:
    """The assistant message a loop builds from a reply (call ids of its own)."""
    calls = tuple(ToolCall(c.name, c.arguments, id=f"loop_{i}") for i, c in enumerate(r.tool_calls))
    return Message("assistant", r.content, r.reasoning, calls)


def replay_logits(backend: LlamaBackend) -> np.ndarray:
    """Logits of a fresh context fed the transcript's tokens with the same decode calls."""
    t = backend.transcript
    fresh = LlamaContext(backend.model, LlamaOptions(n_ctx=4096, n_threads=2, n_batch=64))
    try:
        pos = 0
        for start, count in t.schedule:
            assert start == pos, "the decode calls must cover the transcript without gaps"
            fresh.decode(t.tokens[start : start + count], start)
            pos += count
        assert pos == t.n_past
        return np.array(fresh.logits())
    finally:
        fresh.close()


def one_shot_logits(backend: LlamaBackend) -> np.ndarray:
    """Logits of a fresh context prefilled with the transcript in one batch."""
    t = backend.transcript
    fresh = LlamaContext(backend.model, LlamaOptions(n_ctx=4096, n_threads=2, n_batch=4096))
    try:
        fresh.decode(t.tokens[: t.n_past], 0)
        return np.array(fresh.logits())
    finally:
        fresh.close()


@pytest.mark.slow
def test_each_turn_decodes_only_new_tokens_and_matches_a_fresh_prefill(
    backend: LlamaBackend,
) -> None:
    messages = list(START)
    previous = reply(backend, messages)
    assert previous.usage is not None
    assert previous.usage.reused_tokens == 0
    assert previous.usage.evaluated_tokens == previous.usage.prompt_tokens
    for turn in range(1, 4):
        messages += [as_message(previous), observation(turn)]
        current = reply(backend, messages, seed=turn)
        assert current.usage is not None and previous.usage is not None
        # Everything up to the previous reply's last sampled token was evaluated before.
        known = previous.usage.prompt_tokens + previous.usage.completion_tokens - 1
        assert current.usage.reused_tokens == known
        assert current.usage.evaluated_tokens == current.usage.prompt_tokens - known
        previous = current
    # Prefill the last segment without sampling, then compare with fresh contexts.
    messages += [as_message(previous), observation(9)]
    final = reply(backend, messages, max_tokens=0)
    assert final.finish is not None and final.finish.reason == "length"
    ours = np.array(backend.last_logits())
    assert np.abs(ours - replay_logits(backend)).max() == 0.0
    # One batch instead of several: only kernel rounding may differ, never a token.
    one_shot = one_shot_logits(backend)
    assert int(np.argmax(one_shot)) == int(np.argmax(ours)) or np.abs(ours - one_shot).max() < 1.0


@pytest.mark.slow
def test_retry_and_edit_restore_a_turn_boundary_exactly(backend: LlamaBackend) -> None:
    messages = list(START)
    first = reply(backend, messages)
    messages += [as_message(first), observation(1)]
    second = reply(backend, messages)
    assert second.usage is not None
    boundary = second.usage.prompt_tokens - len(backend.model.tokenize("<|im_start|>assistant\n"))
    # Retry the same turn: only the generation prompt is read again.
    retry = reply(backend, messages)
    assert retry.usage is not None
    assert retry.usage.prompt_tokens == second.usage.prompt_tokens
    assert 0 < retry.usage.evaluated_tokens <= second.usage.prompt_tokens - boundary + 4
    assert retry.finish is not None and second.finish is not None
    assert retry.finish.raw_text == second.finish.raw_text  # same seed, same state
    # Edit the last tool result: back to the boundary after the first reply.
    edited = [*messages[:-1], Message("tool", "calc.py\n1. nothing here")]
    after = reply(backend, [*edited])
    assert after.usage is not None
    assert after.usage.reused_tokens >= first.usage.prompt_tokens if first.usage else False
    reply(backend, [*edited, as_message(after), observation(3)], max_tokens=0)
    assert np.abs(np.array(backend.last_logits()) - replay_logits(backend)).max() == 0.0


def test_transcript_text_equals_the_templates_full_render(backend: LlamaBackend) -> None:
    """Where the conversation was never re-rendered, the transcript is the template's text."""
    call = ToolCall("Read", {"file_path": "calc.py", "offset": 3}, id="c1")
    conversation = [
        *START,
        Message("assistant", "Let me look.", "The test fails; read the file.", (call,)),
        observation(1),
        Message("assistant", "", "Now line 3.", (ToolCall("Read", {"file_path": "b.py"}),)),
        observation(2),
        observation(3),
    ]
    backend.prefill(conversation[:2], TOOLS)
    for end in (4, 5, len(conversation)):
        reply(backend, conversation[:end], max_tokens=0)
        text = backend.model.detokenize(backend.transcript.tokens)
        assert text == backend.template.render(
            conversation[:end], TOOLS, add_generation_prompt=True
        )
        assert backend.transcript.n_past == len(backend.transcript.tokens)


def test_hybrid_without_snapshots_must_reread_after_an_edit(qwen35_gguf: Path) -> None:
    """The snapshot is what saves the re-read: with none kept, an edit starts over."""
    b = LlamaBackend(qwen35_gguf, LlamaOptions(n_ctx=4096, n_threads=2, max_snapshots=0))
    try:
        assert b.model.is_hybrid
        messages = list(START)
        first = reply(b, messages)
        messages += [as_message(first), observation(1)]
        reply(b, messages)
        edited = reply(b, [*messages[:-1], Message("tool", "other")])
        assert edited.usage is not None
        assert edited.usage.reused_tokens == 0
        assert edited.usage.evaluated_tokens == edited.usage.prompt_tokens
    finally:
        b.close()


def test_a_switched_quant_takes_over_the_conversation(qwen35_quants: dict[str, Path]) -> None:
    a = LlamaBackend(qwen35_quants["F16"], LlamaOptions(n_ctx=2048, n_threads=2))
    try:
        messages = [*START]
        first = reply(a, messages)
        messages += [as_message(first), observation(1)]
        b = LlamaBackend.like(a, qwen35_quants["Q8_0"])
    finally:
        a.close()
    try:
        cost = b.reprefill_cost(messages, TOOLS)
        assert cost == b.prefill(messages, TOOLS) > 0
        assert b.reprefill_cost(messages, TOOLS) == 0
        nxt = reply(b, messages)
        assert nxt.usage is not None
        assert nxt.usage.reused_tokens == cost
        assert b.info.quant == "Q8_0"
    finally:
        b.close()
