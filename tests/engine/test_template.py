"""Chat template rendering against the templates embedded in the real test GGUFs."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from frogdesk.engine.chat import Message, ToolCall, ToolSchema
from frogdesk.engine.errors import TemplateError
from frogdesk.engine.template import ChatTemplate, load_gguf_template

READ_TOOL: ToolSchema = {
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


@pytest.fixture(scope="module")
def smollm2_template(smollm2_gguf: Path) -> ChatTemplate:
    """SmolLM2's own template (reading the GGUF's metadata takes a couple of seconds)."""
    return load_gguf_template(smollm2_gguf)


def test_smollm2_template_renders_chatml(smollm2_template: ChatTemplate) -> None:
    template = smollm2_template
    assert (template.bos_token, template.eos_token) == ("<|im_start|>", "<|im_end|>")
    messages = [Message("system", "Be brief."), Message("user", "héllo <b>")]
    assert template.render(messages, add_generation_prompt=True) == (
        "<|im_start|>system\nBe brief.<|im_end|>\n"
        "<|im_start|>user\nhéllo <b><|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    without = template.render(messages, add_generation_prompt=False)
    assert (
        without
        == template.render(messages, add_generation_prompt=True)[: -len("<|im_start|>assistant\n")]
    )


def test_smollm2_template_adds_its_default_system_turn(smollm2_template: ChatTemplate) -> None:
    text = smollm2_template.render([Message("user", "hi")], add_generation_prompt=False)
    assert text.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")
    assert text.endswith("<|im_start|>user\nhi<|im_end|>\n")


def test_smollm2_matches_llama_cpp_python_formatter(smollm2_template: ChatTemplate) -> None:
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = smollm2_template
    messages = [Message("user", "one"), Message("assistant", "two"), Message("user", "three")]
    formatter = Jinja2ChatFormatter(
        template.source, eos_token=template.eos_token, bos_token=template.bos_token
    )
    reference = formatter(messages=[m.to_template_dict() for m in messages])  # type: ignore[misc]
    assert template.render(messages, add_generation_prompt=True) == reference.prompt


def test_qwen35_tools_block_and_generation_prompt(qwen35_gguf: Path) -> None:
    template = load_gguf_template(qwen35_gguf)
    messages = [Message("system", "Sys text."), Message("user", "Fix it")]
    text = template.render(messages, [READ_TOOL], add_generation_prompt=True)
    assert text.startswith("<|im_start|>system\n# Tools")
    # One tool per line, as JSON with the tool's own key order and non-ASCII kept.
    assert "\n" + json.dumps(READ_TOOL, ensure_ascii=False) + "\n</tools>" in text
    assert "Sys text.<|im_end|>\n<|im_start|>user\nFix it<|im_end|>\n" in text
    assert text.endswith("<|im_start|>assistant\n<think>\n")
    off = template.render(messages, [READ_TOOL], add_generation_prompt=True, enable_thinking=False)
    assert off.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")


def test_qwen35_without_tools_has_no_tools_block(qwen35_gguf: Path) -> None:
    text = load_gguf_template(qwen35_gguf).render(
        [Message("system", "S"), Message("user", "U")], add_generation_prompt=False
    )
    assert text == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n"


def test_qwen35_assistant_calls_and_tool_results(qwen35_gguf: Path) -> None:
    template = load_gguf_template(qwen35_gguf)
    calls = (
        ToolCall("Read", {"file_path": "a.py", "offset": 2}, id="c0"),
        ToolCall("Read", {"file_path": "b.py"}, id="c1"),
    )
    messages = [
        Message("user", "task"),
        Message("assistant", " Reading. ", reasoning="\nwhy\n", tool_calls=calls),
        Message("tool", "1. x", tool_call_id="c0"),
        Message("tool", "1. y", tool_call_id="c1"),
    ]
    text = template.render(messages, [READ_TOOL], add_generation_prompt=False)
    assert text.endswith(
        "<|im_start|>assistant\n<think>\nwhy\n</think>\n\nReading.\n\n"
        "<tool_call>\n<function=Read>\n<parameter=file_path>\na.py\n</parameter>\n"
        "<parameter=offset>\n2\n</parameter>\n</function>\n</tool_call>\n"
        "<tool_call>\n<function=Read>\n<parameter=file_path>\nb.py\n</parameter>\n"
        "</function>\n</tool_call><|im_end|>\n"
        "<|im_start|>user\n<tool_response>\n1. x\n</tool_response>\n"
        "<tool_response>\n1. y\n</tool_response><|im_end|>\n"
    )


def test_qwen35_earlier_assistant_turns_drop_reasoning(qwen35_gguf: Path) -> None:
    template = load_gguf_template(qwen35_gguf)
    messages = [
        Message("user", "q1"),
        Message("assistant", "a1", reasoning="r1"),
        Message("user", "q2"),
    ]
    text = template.render(messages, add_generation_prompt=True)
    assert "r1" not in text
    assert "<|im_start|>assistant\na1<|im_end|>\n" in text


def test_template_globals_and_filters() -> None:
    source = (
        "{{ {'z': 'é', 'a': [1, none, true]} | tojson }}|"
        "{{ [1] | tojson(indent=2) }}|"
        "{{ strftime_now('%Y') }}|"
        "{% for m in messages %}{% if loop.index > 1 %}{% break %}{% endif %}{{ m.role }}{% endfor %}|"
        "{{ bos_token }}{{ eos_token }}|{{ custom }}|{{ tools is none }}"
    )
    text = ChatTemplate(source, bos_token="<s>", eos_token="</s>").render(
        [Message("user", "a"), Message("assistant", "b")],
        add_generation_prompt=False,
        custom="extra",
    )
    year = str(datetime.now().year)
    assert text == f'{{"z": "é", "a": [1, null, true]}}|[\n  1\n]|{year}|user|<s></s>|extra|True'


def test_generation_tag_is_accepted() -> None:
    source = "{% for m in messages %}{% generation %}{{ m.content }}{% endgeneration %}{% endfor %}"
    assert ChatTemplate(source).render([Message("user", "x")], add_generation_prompt=False) == "x"


def test_raise_exception_becomes_template_error() -> None:
    template = ChatTemplate(
        "{% if messages[0].role != 'system' %}{{ raise_exception('System first!') }}{% endif %}"
    )
    with pytest.raises(TemplateError, match="refused the conversation: System first!"):
        template.render([Message("user", "x")], add_generation_prompt=True)


def test_syntax_error_names_the_line() -> None:
    with pytest.raises(TemplateError, match=r"does not compile: .*line 2"):
        ChatTemplate("ok\n{% if %}")


def test_empty_template_is_refused() -> None:
    with pytest.raises(TemplateError, match="empty"):
        ChatTemplate("  \n")


@pytest.mark.parametrize(
    ("source", "needle"),
    [
        ("{{ messages.__class__.__mro__ }}", "SecurityError"),
        ("{{ messages.append(1) }}", "SecurityError"),
        ("{{ messages[0].content.nope() }}", "UndefinedError"),
        ("{{ 1 / 0 }}", "ZeroDivisionError"),
        ("{{ messages[5].role }}", "UndefinedError"),
    ],
)
def test_runtime_failures_become_template_errors(source: str, needle: str) -> None:
    with pytest.raises(TemplateError, match=needle):
        ChatTemplate(source).render([Message("user", "x")], add_generation_prompt=False)


def test_missing_or_corrupt_gguf(tmp_path: Path, smollm2_gguf: Path) -> None:
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a gguf at all" * 10)
    with pytest.raises(TemplateError, match="cannot read GGUF metadata"):
        load_gguf_template(junk)
    with pytest.raises(TemplateError, match="cannot read GGUF metadata"):
        load_gguf_template(tmp_path / "absent.gguf")
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(smollm2_gguf.read_bytes()[:4096])
    with pytest.raises(TemplateError, match="cannot read GGUF metadata"):
        load_gguf_template(truncated)
