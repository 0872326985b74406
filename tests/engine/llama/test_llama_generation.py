"""Replies on real llama.cpp: budgets, cancellation, seeds, sampling defaults, forced calls."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from frogdesk.engine.chat import ContentDelta, GenerationSettings, Message, ReasoningDelta, Reply
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.decode.sampling import VENDOR_TEMPERATURE, resolve
from frogdesk.engine.llama.load.model import SamplingDefaults
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.toolcall.values import check_arguments, tool_specs

START = [Message("system", "You are an agent."), Message("user", "Move the robot.")]
BOUNDED_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "Jump",
            "description": "Jump.",
            "parameters": {
                "type": "object",
                "properties": {
                    "height": {"type": "integer"},
                    "fast": {"type": "boolean"},
                    "style": {"type": "string", "enum": ["flip", "twist"]},
                },
                "required": ["height"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "Wait",
            "description": "Wait.",
            "parameters": {"type": "object", "properties": {"seconds": {"type": "number"}}},
        },
    },
]


@pytest.fixture
def qwen(qwen35_gguf: Path) -> Iterator[LlamaBackend]:
    """The tiny hybrid model."""
    b = LlamaBackend(qwen35_gguf, LlamaOptions(n_ctx=2048, n_threads=2))
    yield b
    b.close()


def run(backend: LlamaBackend, messages: list[Message], cancel: threading.Event | None = None,
        **kw: object) -> Reply:  # fmt: skip
    out = Reply()
    settings = GenerationSettings(**{"max_tokens": 16, "seed": 3, **kw})  # type: ignore[arg-type]
    for event in backend.generate(messages, BOUNDED_TOOLS, settings, cancel):
        out.add(event)
    return out


def test_sampling_settings_resolve_explicit_then_gguf_then_vendor() -> None:
    gguf = SamplingDefaults(temperature=0.8, top_p=0.9, top_k=20, min_p=None)
    got = resolve(GenerationSettings(), gguf)
    assert (got.temperature, got.top_p, got.top_k, got.min_p) == (0.8, 0.9, 20, 0.0)
    assert resolve(GenerationSettings(temperature=0.1, top_k=5), gguf).temperature == 0.1
    assert resolve(GenerationSettings(), SamplingDefaults()).temperature == VENDOR_TEMPERATURE
    assert resolve(GenerationSettings(seed=9), gguf).seed == 9


@pytest.mark.llama
def test_gguf_sampling_metadata_is_read(qwen: LlamaBackend, smollm2_gguf: Path) -> None:
    defaults = qwen.model.sampling_defaults()
    assert defaults.top_k == 20 and defaults.temperature == pytest.approx(0.6)


@pytest.mark.llama
def test_length_finish_and_reproducible_seed(qwen: LlamaBackend) -> None:
    a = run(qwen, START, max_tokens=5)
    assert a.finish is not None and a.finish.reason == "length"
    assert a.usage is not None and a.usage.completion_tokens == 5
    b = run(qwen, START, max_tokens=5)  # a retry: same state, same seed
    assert b.finish is not None and b.finish.raw_text == a.finish.raw_text


@pytest.mark.llama
def test_prompt_that_cannot_fit_is_refused_without_decoding(qwen: LlamaBackend) -> None:
    run(qwen, START, max_tokens=2)
    before = (list(qwen.transcript.tokens), qwen.transcript.n_past)
    huge = [*START[:1], Message("user", "word " * 3000)]
    reply = run(qwen, huge)
    assert reply.finish is not None and reply.finish.reason == "max_context_len"
    assert reply.usage is None
    assert (qwen.transcript.tokens, qwen.transcript.n_past) == before
    small_budget = run(qwen, START, max_context=50)
    assert small_budget.finish is not None and small_budget.finish.reason == "max_context_len"


@pytest.mark.llama
def test_cancel_from_another_thread_stops_within_a_step(qwen: LlamaBackend) -> None:
    cancel = threading.Event()
    first_text = threading.Event()

    def canceller() -> None:
        first_text.wait(timeout=60)
        cancel.set()

    thread = threading.Thread(target=canceller)
    thread.start()
    out = Reply()
    settings = GenerationSettings(max_tokens=1500, seed=1)
    for event in qwen.generate(START, BOUNDED_TOOLS, settings, cancel):
        out.add(event)
        if isinstance(event, ReasoningDelta | ContentDelta):
            first_text.set()
    thread.join()
    assert out.finish is not None and out.finish.reason == "cancelled"
    assert out.usage is not None and out.usage.completion_tokens < 1500
    # Cancelled before the prefill: nothing decoded.
    reply = run(qwen, [*START, Message("user", "more")], cancel)
    assert reply.finish is not None and reply.finish.reason == "cancelled"
    assert reply.usage is not None and reply.usage.evaluated_tokens == 0
    # The backend carries on afterwards.
    after = run(qwen, START)
    assert after.finish is not None and after.finish.reason == "length"


@pytest.mark.llama
@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_required_tool_choice_makes_every_call_parse(qwen: LlamaBackend, seed: int) -> None:
    reply = run(qwen, START, max_tokens=400, seed=seed, tool_choice="required",
                enable_thinking=False)  # fmt: skip
    assert reply.finish is not None
    assert reply.tool_calls, reply.finish.raw_text
    if reply.finish.reason == "tool_calls":
        assert reply.errors == []
    else:  # cut by the budget: only the unfinished last call may be reported
        assert reply.finish.reason == "length" and len(reply.errors) <= 1
    specs = tool_specs(BOUNDED_TOOLS)
    for call in reply.tool_calls:
        assert check_arguments(specs[call.name], call.arguments) == []
        if call.name == "Jump":
            assert isinstance(call.arguments["height"], int)


@pytest.mark.llama
def test_tool_choice_none_never_opens_a_call(qwen: LlamaBackend) -> None:
    for seed in range(3):
        reply = run(qwen, START, max_tokens=60, seed=seed, tool_choice="none",
                    enable_thinking=False)  # fmt: skip
        assert reply.finish is not None and "<tool_call>" not in reply.finish.raw_text
