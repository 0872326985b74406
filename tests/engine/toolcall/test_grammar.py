"""The tool-call grammar: its text, and llama.cpp accepting it for the real Leaf tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk.engine.toolcall.grammar import free_text_rules, tool_call_grammar, trigger_pattern
from frogdesk.leaf.schemas import tool_schemas


def test_leaf_grammar_names_every_tool_and_parameter() -> None:
    text = tool_call_grammar(tool_schemas()).text
    for name in ("Read", "Write", "Edit", "Glob", "Bash"):
        assert f"<function={name}>" in text
    for key in ("file_path", "old_string", "replace_all", "timeout", "pattern"):
        assert f"<parameter={key}>" in text
    assert 'root ::= call ("\\n" call)*' in text


def test_grammar_needs_a_tool() -> None:
    with pytest.raises(ValueError):
        tool_call_grammar([])


def test_free_text_refuses_a_pattern_whose_head_repeats() -> None:
    with pytest.raises(ValueError):
        free_text_rules("t", "<a<")


def test_trigger_pattern_matches_from_the_tag() -> None:
    import re

    match = re.fullmatch(trigger_pattern(), "thinking...\n<tool_call>\n<function=Read>")
    assert match is not None and match.start(1) == len("thinking...\n")


@pytest.mark.llama
def test_llama_cpp_accepts_the_leaf_grammars(qwen35_gguf: Path) -> None:
    from frogdesk.engine.llama.decode.sampling import GrammarUse, Sampler, SamplerSettings
    from frogdesk.engine.llama.load.model import LlamaModel

    model = LlamaModel(qwen35_gguf)
    try:
        for lazy in (True, False):
            grammar = tool_call_grammar(tool_schemas(), leading_newlines=not lazy)
            use = GrammarUse(grammar, lazy, (), (trigger_pattern(),) if lazy else ())
            Sampler(model, SamplerSettings(0.6), grammar=use).close()
        broken = GrammarUse(type(grammar)("root ::= nothing-defined"), False)
        with pytest.raises(ValueError):
            Sampler(model, SamplerSettings(0.6), grammar=broken)
    finally:
        model.close()
