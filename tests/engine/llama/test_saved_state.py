"""A saved engine state loaded into a fresh backend continues exactly as the live one would.

And a state saved for another conversation, another model file or other options is refused
before llama.cpp sees it; the controls show llama.cpp itself would have taken it and the
logits would then have been wrong.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import llama_cpp
import numpy as np
import pytest

from frogdesk.engine.chat import GenerationSettings, Message, Reply, ToolCall
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.conversation.saved_state import (
    EngineState,
    capture,
    install,
    read_state,
    state_key,
    write_to,
)
from frogdesk.engine.llama.decode.context import SEQ, LlamaContext
from frogdesk.engine.llama.errors import SavedStateError
from frogdesk.engine.llama.load.options import LlamaOptions

pytestmark = pytest.mark.llama

OPTIONS = LlamaOptions(n_ctx=4096, n_threads=2, n_batch=64)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "Read",
            "description": "Read a text file. Returns numbered lines.",
            "parameters": {
                "type": "object",
                "properties": {"file_path": {"type": "string"}},
                "required": ["file_path"],
            },
        },
    }
]
START = [
    Message("system", "You are a software-engineering agent working in a checked-out repository."),
    Message("user", "Fix the failing test in calc.py."),
]
OTHER_START = [START[0], Message("user", "Write a README for the parser module, briefly.")]


def observation(turn: int) -> Message:
    """A tool result, different every turn."""
    return Message("tool", f"calc.py\n1. total = {turn} + value\n2. return total  ")


def generate(backend: LlamaBackend, messages: list[Message], max_tokens: int, seed: int) -> Reply:
    """One reply to the end."""
    out = Reply()
    settings = GenerationSettings(max_tokens=max_tokens, seed=seed)
    for event in backend.generate(messages, TOOLS, settings):
        out.add(event)
    assert out.finish is not None
    return out


def as_message(r: Reply) -> Message:
    """The assistant message the loop keeps (with the raw reply a resume writes back)."""
    assert r.finish is not None
    calls = tuple(ToolCall(c.name, c.arguments, id=f"c{i}") for i, c in enumerate(r.tool_calls))
    return Message("assistant", r.content, r.reasoning, calls, raw=r.finish.raw_text,
                   raw_tokens=r.finish.raw_tokens)  # fmt: skip


@dataclass
class Stopped:
    """A session stopped after its last reply: the messages kept, the state saved, and the
    logits the live backend gives for the next turn."""

    messages: list[Message]
    state: EngineState
    next_messages: list[Message]
    next_tokens: list[int]
    next_logits: np.ndarray


def stop_after(path: Path, start: list[Message], turns: int = 2) -> Stopped:
    """Run `turns` replies, save the state as a stopping session does, then go on one turn."""
    b = LlamaBackend(path, OPTIONS)
    try:
        messages = list(start)
        for turn in range(turns):
            messages += [as_message(generate(b, messages, 12, turn)), observation(turn)]
        messages.append(as_message(generate(b, messages, 12, 7)))
        state = capture(b, state_key(b, "model-id"))
        assert state is not None
        nxt = [*messages, observation(9)]
        assert generate(b, nxt, 0, 0).usage is not None
        return Stopped(messages, state, nxt, list(b.transcript.tokens), np.array(b.last_logits()))
    finally:
        b.close()


def replay(backend: LlamaBackend, tokens: list[int], schedule: list[tuple[int, int]]) -> np.ndarray:
    """Logits of a fresh context fed `tokens` with the decode calls of `schedule`."""
    fresh = LlamaContext(backend.model, OPTIONS)
    try:
        for start, count in schedule:
            fresh.decode(tokens[start : start + count], start)
        return np.array(fresh.logits())
    finally:
        fresh.close()


@pytest.fixture(scope="module")
def stopped(request: pytest.FixtureRequest) -> dict[str, Stopped]:
    """Each model's stopped session (made once)."""
    return {}


def stopped_for(name: str, path: Path, cache: dict[str, Stopped]) -> Stopped:
    """The stopped session of model `name`, made on first use."""
    if name not in cache:
        cache[name] = stop_after(path, START)
    return cache[name]


@pytest.fixture
def backends(smollm2_gguf: Path, qwen35_gguf: Path) -> Iterator[dict[str, Path]]:
    """The two test models by name."""
    yield {"smollm2": smollm2_gguf, "qwen35": qwen35_gguf}


@pytest.mark.parametrize("name", ["smollm2", "qwen35"])
def test_a_restored_state_gives_the_next_logits_of_the_live_session(
    name: str, backends: dict[str, Path], stopped: dict[str, Stopped], tmp_path: Path
) -> None:
    path = backends[name]
    s = stopped_for(name, path, stopped)
    with (tmp_path / "engine.state").open("wb") as handle:
        write_to(handle, s.state)
    state = read_state(tmp_path / "engine.state", 1 << 30)
    assert state == s.state

    b = LlamaBackend(path, OPTIONS)
    try:
        assert b.model.is_hybrid == (name == "qwen35")
        loaded = install(b, state, state_key(b, "model-id"), s.messages, TOOLS,
                         enable_thinking=True)  # fmt: skip
        assert loaded == len(s.state.tokens)
        t = b.transcript
        assert t.tokens[: t.n_past] == list(s.state.tokens)
        r = generate(b, s.next_messages, 0, 0)
        assert r.usage is not None
        assert r.usage.reused_tokens == loaded  # nothing before the state was read again
        assert t.tokens == s.next_tokens
        ours = np.array(b.last_logits())
        # Bit for bit what the live session gives, and what a fresh read of the same tokens
        # with the same decode calls gives (the KV cache and, for qwen35, the recurrent state).
        assert np.array_equal(ours, s.next_logits)
        assert np.array_equal(ours, replay(b, t.tokens, t.schedule))
    finally:
        b.close()

    again = LlamaBackend(path, OPTIONS)
    try:  # reading the transcript again: other decode calls, only kernel rounding may differ
        generate(again, s.next_messages, 0, 0)
        assert again.transcript.tokens == s.next_tokens
        reread = np.array(again.last_logits())
        assert int(np.argmax(reread)) == int(np.argmax(ours))
    finally:
        again.close()


def _raw_set(b: LlamaBackend, state: EngineState) -> bool:
    """What llama.cpp alone says of the bytes (no key or token check)."""
    buf = (ctypes.c_uint8 * len(state.data)).from_buffer_copy(state.data)
    n = int(llama_cpp.llama_state_seq_set_data(b.context.handle, buf, len(state.data), SEQ))
    return n == len(state.data)


def test_a_hybrid_state_of_another_conversation_is_refused_though_llama_cpp_takes_it(
    qwen35_gguf: Path, stopped: dict[str, Stopped]
) -> None:
    s = stopped_for("qwen35", qwen35_gguf, stopped)
    # longer than the saved state, so the forged state is all used in the control
    long_result = Message("tool", "readme line\n" * (len(s.state.tokens) // 8))
    other = [*OTHER_START, Message("assistant", "Sure."), long_result]
    b = LlamaBackend(qwen35_gguf, OPTIONS)
    try:
        with pytest.raises(SavedStateError, match="tokens the transcript does not"):
            install(b, s.state, state_key(b, "model-id"), other, TOOLS, enable_thinking=True)
        assert b.transcript.tokens == [] and b.transcript.n_past == 0
        generate(b, other, 0, 0)
        honest = np.array(b.last_logits())
    finally:
        b.close()

    control = LlamaBackend(qwen35_gguf, OPTIONS)
    try:  # the old way, trusting the bytes: llama.cpp takes them and the logits are wrong
        plan = control.conversation.plan(
            other, TOOLS, enable_thinking=True, generation_prompt=False
        )
        control.conversation.apply(plan)
        assert _raw_set(control, s.state)
        control.transcript.n_past = len(s.state.tokens)
        control.transcript.schedule = list(s.state.schedule)
        r = generate(control, other, 0, 0)
        assert r.usage is not None and r.usage.reused_tokens == len(s.state.tokens)
        assert not np.array_equal(np.array(control.last_logits()), honest)
    finally:
        control.close()


def test_a_transformer_keeps_only_the_part_another_conversation_shares(
    smollm2_gguf: Path, stopped: dict[str, Stopped]
) -> None:
    """A KV cache can be cut: the shared opening is kept, the rest decoded, exactly."""
    s = stopped_for("smollm2", smollm2_gguf, stopped)
    other = [*OTHER_START, Message("assistant", "Sure."), observation(5)]
    b = LlamaBackend(smollm2_gguf, OPTIONS)
    try:
        loaded = install(b, s.state, state_key(b, "model-id"), other, TOOLS, enable_thinking=True)
        assert 0 < loaded < len(s.state.tokens)
        generate(b, other, 0, 0)
        t = b.transcript
        assert np.array_equal(np.array(b.last_logits()), replay(b, t.tokens, t.schedule))
    finally:
        b.close()


def test_a_state_of_another_quant_is_refused_though_llama_cpp_takes_it(
    qwen35_quants: dict[str, Path], tmp_path: Path
) -> None:
    names = sorted(qwen35_quants)
    first, second = qwen35_quants[names[0]], qwen35_quants[names[1]]
    s = stop_after(first, START, turns=1)
    b = LlamaBackend(second, OPTIONS)
    try:
        key = state_key(b, "another-file")
        with pytest.raises(SavedStateError, match="another model file"):
            install(b, replace(s.state, key=state_key(b, "model-id")), key, s.messages, TOOLS,
                    enable_thinking=True)  # fmt: skip
        assert b.transcript.n_past == 0
        generate(b, s.next_messages, 0, 0)
        honest = np.array(b.last_logits())
    finally:
        b.close()

    control = LlamaBackend(second, OPTIONS)
    try:  # with the key check skipped, llama.cpp takes the other file's state
        install(control, s.state, s.state.key, s.messages, TOOLS, enable_thinking=True)
        generate(control, s.next_messages, 0, 0)
        assert not np.array_equal(np.array(control.last_logits()), honest)
    finally:
        control.close()


def test_a_state_saved_with_other_options_is_refused(
    smollm2_gguf: Path, stopped: dict[str, Stopped]
) -> None:
    s = stopped_for("smollm2", smollm2_gguf, stopped)
    b = LlamaBackend(smollm2_gguf, replace(OPTIONS, n_batch=32))
    try:
        with pytest.raises(SavedStateError, match="n_batch"):
            install(b, s.state, state_key(b, "model-id"), s.messages, TOOLS, enable_thinking=True)
        assert b.transcript.n_past == 0
    finally:
        b.close()


def test_a_state_whose_bytes_do_not_hold_its_tokens_is_refused_and_leaves_nothing(
    smollm2_gguf: Path, stopped: dict[str, Stopped]
) -> None:
    """The header names more tokens than the data holds (a forged file with a good checksum)."""
    s = stopped_for("smollm2", smollm2_gguf, stopped)
    b = LlamaBackend(smollm2_gguf, OPTIONS)
    try:
        longer = s.next_tokens[: len(s.state.tokens) + 3]
        forged = replace(s.state, tokens=tuple(longer),
                         schedule=((0, len(longer)),))  # fmt: skip
        with pytest.raises(SavedStateError):
            install(b, forged, state_key(b, "model-id"), s.next_messages, TOOLS,
                    enable_thinking=True)  # fmt: skip
        assert b.transcript.n_past == 0 and b.transcript.tokens == []
        mem = llama_cpp.llama_get_memory(b.context.handle)
        assert int(llama_cpp.llama_memory_seq_pos_max(mem, SEQ)) == -1
    finally:
        b.close()
