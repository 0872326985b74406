"""Invariant 4 through a whole session: each step evaluates only new tokens, also on hybrid qwen35.

The random-weight model rarely writes a tool call on its own, so the session's backend
asks the real llama backend for `tool_choice="required"` (its grammar then makes every
reply a call) and offers only Read and Glob with their required parameter narrowed to a
few values (free text from random weights rarely ends). Everything else is the path `frogdesk run` takes: SessionService, the Leaf
loop, the real tool runner in a real worktree, the transcript and the trajectory.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from frogdesk.config import Settings
from frogdesk.engine.chat import (
    BackendInfo,
    EngineEvent,
    GenerationSettings,
    Message,
    ToolSchema,
)
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.paths import AppPaths
from frogdesk.sessions.record import SessionRecord, SessionSpec
from frogdesk.sessions.service import SessionService
from tests.support.e2e import make_user_repo

pytestmark = [pytest.mark.llama, pytest.mark.slow]


CHOICES = {
    "Read": ("file_path", ["big.txt", "app.py", "missing.txt"]),
    "Glob": ("pattern", ["*.txt", "**/*"]),
}


class CallingBackend:
    """The real LlamaBackend, asked for a tool call every turn, of Read or Glob on known values."""

    def __init__(self, inner: LlamaBackend) -> None:
        self.inner = inner

    @property
    def info(self) -> BackendInfo:
        """The inner backend's description."""
        return self.inner.info

    @staticmethod
    def offered(tools: Sequence[ToolSchema]) -> list[ToolSchema]:
        """Leaf's Read and Glob, each with only its required parameter, limited to CHOICES."""
        out: list[ToolSchema] = []
        for tool in tools:
            function = tool["function"]
            if function["name"] not in CHOICES:
                continue
            key, values = CHOICES[function["name"]]
            prop = {**function["parameters"]["properties"][key], "enum": values}
            params = {"type": "object", "properties": {key: prop}, "required": [key]}
            out.append({"type": "function", "function": {**function, "parameters": params}})
        return out

    def generate(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        settings: GenerationSettings,
        cancel: threading.Event | None = None,
    ) -> Iterator[EngineEvent]:
        """One reply of the real engine, constrained to a tool call."""
        forced = dataclasses.replace(settings, tool_choice="required", enable_thinking=False)
        return self.inner.generate(messages, self.offered(tools), forced, cancel)

    def count_tokens(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> int:
        """The inner backend's count."""
        return self.inner.count_tokens(messages, self.offered(tools))

    def close(self) -> None:
        """Nothing: the test closes the inner backend after comparing it."""


def fresh_logits(backend: LlamaBackend, schedule: Sequence[tuple[int, int]]) -> list[float]:
    """Logits of a new context fed the backend's transcript tokens in the given decode calls."""
    t = backend.transcript
    fresh = LlamaContext(backend.model, LlamaOptions(n_ctx=8192, n_threads=2, n_batch=8192))
    try:
        for start, count in schedule:
            fresh.decode(t.tokens[start : start + count], start)
        return fresh.logits()
    finally:
        fresh.close()


def test_a_session_on_tiny_qwen35_evaluates_each_token_once_and_matches_a_fresh_prefill(
    tmp_path: Path, qwen35_gguf: Path, sandbox_level: str
) -> None:
    repo = make_user_repo(tmp_path)
    inner = LlamaBackend(qwen35_gguf, LlamaOptions(n_ctx=8192, n_threads=2, n_batch=64, seed=11))
    assert inner.model.is_hybrid

    def factory(record: SessionRecord, settings: Settings, replies_done: int = 0) -> Any:
        return CallingBackend(inner)

    settings = Settings.of(
        max_steps=4, max_tokens_per_turn=256, max_context_tokens=8192,
        temperature=1.0, seed=5,
    )  # fmt: skip
    service = SessionService(AppPaths.default(), settings, backend_factory=factory)
    try:
        active = service.start(SessionSpec("Look at big.txt.", repo, backend="llama", model="x"))
        outcome = service.run(active)
        steps = outcome.trajectory["frogdesk"]["steps"]
        assert outcome.result.exit_reason == "max_turns", outcome.result.error
        assert len(steps) == 4
        assert all(s["assistant"]["tool_calls"] for s in outcome.trajectory["steps"])
        usages = [s["usage"] for s in steps]
        assert usages[0]["reused_tokens"] == 0
        assert usages[0]["evaluated_tokens"] == usages[0]["prompt_tokens"]
        for before, now in itertools.pairwise(usages):
            known = before["prompt_tokens"] + before["completion_tokens"] - 1
            assert now["reused_tokens"] == known, (before, now)
            assert now["evaluated_tokens"] == now["prompt_tokens"] - known, (before, now)
            assert now["evaluated_tokens"] < now["prompt_tokens"] // 2  # the history is not re-read

        # Over the whole session each position was decoded once, in order, without gaps.
        t = inner.transcript
        assert [start for start, _ in t.schedule] == [
            sum(n for _, n in t.schedule[:i]) for i in range(len(t.schedule))
        ]
        # Bring the last observations in (no reply) and compare with a fresh prefill.
        tools = CallingBackend.offered(active.tools)
        added = inner.prefill(outcome.result.messages, tools, enable_thinking=False)
        assert 0 < added < t.n_past // 2
        ours = np.array(inner.last_logits())
        same_calls = np.array(fresh_logits(inner, list(t.schedule)))
        assert np.abs(ours - same_calls).max() == 0.0
        one_batch = np.array(fresh_logits(inner, [(0, t.n_past)]))
        assert int(np.argmax(one_batch)) == int(np.argmax(ours))
    finally:
        inner.close()
