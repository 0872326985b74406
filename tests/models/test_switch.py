"""Switching quant mid-conversation: resolve the new quant, announce the cost, carry the conversation."""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk import config
from frogdesk.engine.chat import GenerationSettings, Message, Reply, ToolCall
from frogdesk.models.errors import ModelError
from frogdesk.models.gguf_info import inspect_gguf
from frogdesk.models.move_cost import plan_switch, switch_cost
from frogdesk.models.resolve import resolve_local
from frogdesk.paths import AppPaths

REPO = "someone/FrogNano-tiny-GGUF"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "Read",
            "description": "Read a text file.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    }
]


def _reply(backend: object, messages: list[Message]) -> Reply:
    out = Reply()
    for event in backend.generate(messages, TOOLS, GenerationSettings(max_tokens=16, seed=3)):  # type: ignore[attr-defined]
        out.add(event)
    assert out.finish is not None and out.usage is not None
    return out


def _as_message(r: Reply) -> Message:
    calls = tuple(ToolCall(c.name, c.arguments, id=f"c{i}") for i, c in enumerate(r.tool_calls))
    return Message("assistant", r.content, r.reasoning, calls)


def test_switch_cost_measured_and_estimated(qwen35_gguf: Path) -> None:
    info = inspect_gguf(qwen35_gguf)
    measured = switch_cost(1000, info, prefill_tokens_per_second=250.0)
    assert measured.measured and measured.est_seconds == pytest.approx(4.0)
    assert "1,000 tokens" in measured.describe() and "measured" in measured.describe()
    guessed = switch_cost(1000, info, threads=2)
    assert not guessed.measured and guessed.est_seconds > 0
    assert switch_cost(0, info).est_seconds == 0
    with pytest.raises(ValueError):
        switch_cost(-1, info)


def test_switch_to_a_quant_not_on_disk_says_how_to_get_it() -> None:
    settings = config.load(AppPaths.default().config_file, environ={})
    with pytest.raises(ModelError, match="models pull someone/FrogNano-tiny-GGUF:Q8_0"):
        plan_switch(f"{REPO}:Q8_0", settings, 100)


@pytest.mark.llama
def test_switching_quant_keeps_the_conversation_going(qwen35_quants: dict[str, Path]) -> None:
    from frogdesk.engine.llama.backend import LlamaBackend
    from frogdesk.engine.llama.load.options import LlamaOptions

    paths = AppPaths.default()
    folder = paths.models_dir / REPO
    folder.mkdir(parents=True)
    for quant in ("F16", "Q8_0"):
        (folder / f"FrogNano-tiny-{quant}.gguf").symlink_to(qwen35_quants[quant])
    settings = config.load(paths.config_file, environ={})

    first_path = resolve_local(f"{REPO}:F16", settings)
    a = LlamaBackend(first_path, LlamaOptions(n_ctx=2048, n_threads=2))
    try:
        messages = [Message("system", "You are a coding agent."), Message("user", "Read calc.py.")]
        first = _reply(a, messages)
        messages += [_as_message(first), Message("user", "Now explain it.")]
        usage = first.usage
        assert usage is not None
        rate = usage.evaluated_tokens / usage.prefill_seconds if usage.prefill_seconds else None
        tokens = a.count_tokens(messages, TOOLS)
        plan = plan_switch(f"{REPO}:Q8_0", settings, tokens, rate)
        b = LlamaBackend.like(a, plan.path)
    finally:
        a.close()
    try:
        assert plan.path == folder / "FrogNano-tiny-Q8_0.gguf"
        assert plan.cost.tokens == tokens and plan.cost.measured == (rate is not None)
        assert "unvalidated-quant" in [w.id for w in plan.warnings]
        announced = b.reprefill_cost(messages, TOOLS)
        evaluated = b.prefill(messages, TOOLS)
        assert evaluated == announced and 0 < evaluated <= plan.cost.tokens
        before = list(messages)
        nxt = _reply(b, messages)
        assert messages == before  # the transcript is kept as it was
        assert nxt.usage is not None and nxt.usage.reused_tokens == evaluated
        assert nxt.finish is not None and nxt.finish.reason != "error"
        assert b.info.quant == "Q8_0"
    finally:
        b.close()
