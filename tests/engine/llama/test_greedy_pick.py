"""The greedy pick read straight from the logits equals what llama.cpp's sampler chain picks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from frogdesk.engine.chat import ToolSchema
from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.decode.sampling import GrammarUse, Sampler, SamplerSettings
from frogdesk.engine.llama.load.model import LlamaModel
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.toolcall.grammar import tool_call_grammar, trigger_pattern
from frogdesk.leaf.schemas import tool_schemas

pytestmark = pytest.mark.llama

OPTIONS = LlamaOptions(n_ctx=1024, n_threads=2, n_batch=64)
TOOL: ToolSchema = next(t for t in tool_schemas() if t["function"]["name"] == "Read")
TEXT = "def area(width: int, height: int) -> int:\n    return width * height\n" * 3


@pytest.fixture
def batch(smollm2_gguf: Path) -> Iterator[tuple[LlamaModel, LlamaContext, int]]:
    """SmolLM2 after one verification batch: every row holds logits."""
    model = LlamaModel(smollm2_gguf, OPTIONS)
    ctx = LlamaContext(model, OPTIONS)
    tokens = model.tokenize(TEXT)
    ctx.decode(tokens[:8], 0)
    ctx.decode_rows(tokens[8:], 8)
    yield model, ctx, len(tokens) - 8
    ctx.close()
    model.close()


def test_the_plain_greedy_pick_is_the_chains_pick(
    batch: tuple[LlamaModel, LlamaContext, int],
) -> None:
    """Row by row, the pick read from the logits equals the one the chain makes when a lazy
    grammar that has not triggered sits in it (the chain then runs over the whole vocabulary)."""
    model, ctx, rows = batch
    greedy = SamplerSettings(temperature=0.0)
    plain = Sampler(model, greedy)
    lazy = GrammarUse(tool_call_grammar([TOOL]), True, (), (trigger_pattern(),))
    chained = Sampler(model, greedy, grammar=lazy)
    try:
        leads = []
        for row in range(rows):
            fast, slow = plain.choose(ctx.handle, row), chained.choose(ctx.handle, row)
            assert fast == slow, row
            leads.append(fast.lead)
        assert min(leads) < max(leads), "rows with different leads were compared"
        # Control: a banned token changes the chain's pick where it was the plain pick.
        top = plain.choose(ctx.handle, 0).token
        banned = Sampler(model, greedy, banned=[top])
        try:
            assert banned.choose(ctx.handle, 0).token != top
        finally:
            banned.close()
    finally:
        plain.close()
        chained.close()
