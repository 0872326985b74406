"""The opening every session shares (system prompt and tools) is evaluated once per model.

A conversation started from the saved opening, or from the opening another conversation
left in the same context, gives exactly the logits of a fresh context reading it all; a
file saved under another key or holding other tokens is refused and removed, and the
controls show the refusal is what kept the logits right.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from frogdesk.engine.chat import Message
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.conversation.saved_state import EngineState, read_state
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.leaf.schemas import tool_schemas
from frogdesk.sessions.openings import load_opening, opening_file, save_opening
from frogdesk.sessions.saved_states import state_key_of, write_state_file

pytestmark = pytest.mark.llama

OPTIONS = LlamaOptions(n_ctx=4096, n_threads=2, n_batch=64)
TOOLS = tool_schemas()  # Leaf's own, as every session sends them
SYSTEM = Message("system", "You are a software-engineering agent working in a repository. " * 6)
FIRST = [SYSTEM, Message("user", "Fix the failing test in calc.py.")]
SECOND = [SYSTEM, Message("user", "Write a README for the parser module, briefly.")]
CAP = 1 << 30


def fresh_logits(path: Path, messages: list[Message]) -> tuple[np.ndarray, list[int]]:
    """The logits after a fresh backend reads `messages`, and the decode calls it made."""
    b = LlamaBackend(path, OPTIONS)
    try:
        b.prefill(messages, TOOLS)
        return np.array(b.last_logits()), list(b.transcript.schedule)
    finally:
        b.close()


def saved_opening(path: Path, folder: Path, data_dir: Path) -> Path:
    """Run the first session's prefill as a session does and keep its opening; its file."""
    b = LlamaBackend(path, OPTIONS)
    try:
        assert load_opening(b, folder, data_dir, CAP, FIRST, TOOLS, enable_thinking=True) == ""
        b.prefill(FIRST, TOOLS)
        said = save_opening(b, folder, data_dir, CAP)
        assert "saved" in said
        opening = b.conversation.opening_tokens(FIRST, TOOLS, enable_thinking=True)
        file = opening_file(folder, state_key_of(b, data_dir), opening)
        assert file.is_file()
        return file
    finally:
        b.close()


@pytest.fixture
def models(smollm2_gguf: Path, qwen35_gguf: Path) -> dict[str, Path]:
    """The two test models by name."""
    return {"smollm2": smollm2_gguf, "qwen35": qwen35_gguf}


@pytest.mark.parametrize("name", ["smollm2", "qwen35"])
def test_a_new_session_from_the_saved_opening_reads_exactly_what_a_fresh_one_would(
    name: str, models: dict[str, Path], tmp_path: Path
) -> None:
    path = models[name]
    folder, data_dir = tmp_path / "openings", tmp_path / "data"
    saved_opening(path, folder, data_dir)
    want, schedule = fresh_logits(path, SECOND)
    b = LlamaBackend(path, OPTIONS)
    try:
        said = load_opening(b, folder, data_dir, CAP, SECOND, TOOLS, enable_thinking=True)
        assert "loaded from saved state" in said
        opening = b.transcript.n_past
        assert 0 < opening < len(b.transcript.tokens)
        evaluated = b.prefill(SECOND, TOOLS)
        assert evaluated == len(b.transcript.tokens) - opening  # the opening was not read
        assert b.transcript.schedule == schedule  # the same decode calls as the fresh read
        np.testing.assert_array_equal(np.array(b.last_logits()), want)
    finally:
        b.close()


@pytest.mark.parametrize("name", ["smollm2", "qwen35"])
def test_a_second_conversation_in_one_context_starts_after_the_opening_the_first_left(
    name: str, models: dict[str, Path]
) -> None:
    path = models[name]
    want, _ = fresh_logits(path, SECOND)
    b = LlamaBackend(path, OPTIONS)
    try:
        b.prefill(FIRST, TOOLS)
        opening = len(b.conversation.opening_tokens(FIRST, TOOLS, enable_thinking=True))
        evaluated = b.prefill(SECOND, TOOLS)
        assert evaluated == len(b.transcript.tokens) - opening
        np.testing.assert_array_equal(np.array(b.last_logits()), want)
    finally:
        b.close()


def test_the_opening_is_the_shared_part_only(smollm2_gguf: Path) -> None:
    b = LlamaBackend(smollm2_gguf, OPTIONS)
    try:
        first = b.conversation.opening_tokens(FIRST, TOOLS, enable_thinking=True)
        second = b.conversation.opening_tokens(SECOND, TOOLS, enable_thinking=True)
        whole = b.conversation.plan(FIRST, TOOLS, enable_thinking=True, generation_prompt=False)
        assert first == second and 0 < len(first) < len(whole.tokens)
        assert whole.tokens[: len(first)] == first
        # no system prompt, no shared opening
        assert b.conversation.opening_tokens(FIRST[1:], TOOLS, enable_thinking=True) == []
    finally:
        b.close()


def test_an_opening_saved_under_another_key_is_refused_and_removed(
    smollm2_gguf: Path, tmp_path: Path
) -> None:
    folder, data_dir = tmp_path / "openings", tmp_path / "data"
    file = saved_opening(smollm2_gguf, folder, data_dir)
    state = read_state(file, CAP)
    other = EngineState({**state.key, "model": "another-sha256"}, state.tokens, state.schedule,
                        state.data)  # fmt: skip
    assert write_state_file(file, other) == ""
    b = LlamaBackend(smollm2_gguf, OPTIONS)
    try:
        said = load_opening(b, folder, data_dir, CAP, SECOND, TOOLS, enable_thinking=True)
        assert said.startswith("the shared opening is decoded again")
        assert "another model file" in said
        assert not file.exists() and b.transcript.n_past == 0
        assert b.conversation.keep_opening  # it is captured again on the way
    finally:
        b.close()


def test_an_opening_holding_other_tokens_is_refused_where_the_real_one_loads(
    smollm2_gguf: Path, tmp_path: Path
) -> None:
    folder, data_dir = tmp_path / "openings", tmp_path / "data"
    file = saved_opening(smollm2_gguf, folder, data_dir)
    genuine = file.read_bytes()
    state = read_state(file, CAP)
    short = len(state.tokens) // 2  # a planted header under the real opening's name
    planted = EngineState(state.key, state.tokens[:short], ((0, short),), state.data)
    assert write_state_file(file, planted) == ""
    b = LlamaBackend(smollm2_gguf, OPTIONS)
    try:
        said = load_opening(b, folder, data_dir, CAP, SECOND, TOOLS, enable_thinking=True)
        assert "its tokens are not the opening's" in said and not file.exists()
        assert b.transcript.n_past == 0
    finally:
        b.close()
    # control: the genuine file at the same place loads
    file.write_bytes(genuine)
    c = LlamaBackend(smollm2_gguf, OPTIONS)
    try:
        said = load_opening(c, folder, data_dir, CAP, SECOND, TOOLS, enable_thinking=True)
        assert "loaded from saved state" in said
        assert c.transcript.n_past == len(state.tokens)
    finally:
        c.close()
