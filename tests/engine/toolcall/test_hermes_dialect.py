"""The Hermes dialect's parser: every case whole, one character at a time and split at every position.

The cases named `vllm_*`, `sglang_*` and `llamacpp_*` are those of the public test suites of
vLLM's Hermes tool parser (tests/entrypoints/openai/tool_parsers/test_hermes_tool_parser.py),
SGLang's Qwen2.5 detector (test/srt/test_function_call_parser.py and its unit tests) and
llama.cpp's Hermes 2 Pro chat-format tests (tests/test-chat.cpp), with their expected
results; where FrogDesk's answer differs on purpose (a malformed call is said to the model
instead of dropped), the case says so.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import pytest

from frogdesk.engine.chat import EngineEvent, Reply, ToolCall, ToolSchema
from frogdesk.engine.toolcall.hermes import HermesToolParser, render_tool_call_hermes
from frogdesk.leaf.schemas import tool_schemas


def _tool(name: str, properties: dict[str, Any], required: list[str]) -> ToolSchema:
    return {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


TOOLS: list[ToolSchema] = [
    _tool(
        "get_weather",
        {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        ["city"],
    ),
    _tool("search", {"query": {"type": "string"}}, ["query"]),
    _tool("final_answer", {"trigger": {"type": "boolean"}}, ["trigger"]),
    _tool("internet_search", {"question": {"type": "string"}}, ["question"]),
    _tool(
        "get_current_temperature",
        {"location": {"type": "string"}, "unit": {"type": "string"}},
        ["location"],
    ),
    _tool("special_function", {"arg1": {"type": "integer"}}, ["arg1"]),
    _tool("python", {"code": {"type": "string"}}, ["code"]),
    *tool_schemas(),
]


@dataclass(frozen=True)
class Expect:
    """What a reply must parse to."""

    content: str = ""
    calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    errors: tuple[str, ...] = ()
    """A piece of each error message, in order."""
    recoveries: tuple[str, ...] = ()
    reasoning: str = ""
    starts_in_reasoning: bool = False
    strict: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def outcome(chunks: list[str], *, reasoning: bool, strict: bool) -> tuple[Any, ...]:
    parser = HermesToolParser(TOOLS, starts_in_reasoning=reasoning, strict=strict)
    events: list[EngineEvent] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.finish())
    reply = Reply()
    for event in events:
        reply.add(event)
    return (
        reply.reasoning,
        reply.content,
        [(c.name, c.arguments, c.id) for c in reply.tool_calls],
        [(e.name, e.error, e.raw) for e in reply.errors],
        reply.recoveries,
    )


def check(text: str, expect: Expect) -> None:
    """The case parses as expected whole, one character at a time and split at every position."""
    kw = {"reasoning": expect.starts_in_reasoning, "strict": expect.strict}
    whole = outcome([text], **kw)
    reasoning, content, calls, errors, recoveries = whole
    assert reasoning == expect.reasoning
    assert content == expect.content
    assert [(name, args) for name, args, _ in calls] == list(expect.calls)
    assert len(errors) == len(expect.errors), errors
    for (_, message, _), piece in zip(errors, expect.errors, strict=True):
        assert piece in message
    assert recoveries == list(expect.recoveries)
    assert outcome(list(text), **kw) == whole
    for cut in range(1, len(text)):
        assert outcome([text[:cut], text[cut:]], **kw) == whole, cut


WEATHER = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Beijing"}}\n</tool_call>'
SPECIAL = {"arg1": 1}
SPECIAL_JSON = '{"name": "special_function", "arguments": {"arg1": 1}}'
QUESTION = "5MW燃气轮机设计参数 空气流量 压气机压比 转速 燃烧室出口温度 压气机级数 支点布局"

CASES: dict[str, tuple[str, Expect]] = {
    # vLLM, test_hermes_tool_parser.py
    "vllm_lei_test_streaming_01_reasoning_then_call": (
        "好的，用户现在要研发一个5MW的燃气轮机。\n</think>\n\n<tool_call>\n"
        f'{{"name": "internet_search", "arguments": {{"question": "{QUESTION}"}}}}\n</tool_call>\n\n ',
        Expect(
            reasoning="好的，用户现在要研发一个5MW的燃气轮机。",
            calls=(("internet_search", {"question": QUESTION}),),
            starts_in_reasoning=True,
        ),
    ),
    "vllm_lei_test_streaming_02_call_only": (
        f'<tool_call>\n{{"name": "internet_search", "arguments": {{"question": "{QUESTION}"}}}}\n</tool_call>',
        Expect(calls=(("internet_search", {"question": QUESTION}),)),
    ),
    "vllm_test_hermes_parser_streaming_just_forward_text": (
        "This is some prior text that has nothing to do with tool calling.",
        Expect(content="This is some prior text that has nothing to do with tool calling."),
    ),
    "vllm_test_hermes_parser_streaming_failure_case_bug_19056": (
        '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}}\n</tool_call>',
        Expect(calls=(("final_answer", {"trigger": True}),)),
    ),
    "vllm_test_hermes_parser_streaming": (
        '<tool_call>{"name": "get_current_temperature","arguments": {"location":'
        '"San Francisco, California, United States", "unit": "celsius"}}</tool_call>',
        Expect(
            calls=(
                (
                    "get_current_temperature",
                    {"location": "San Francisco, California, United States", "unit": "celsius"},
                ),
            )
        ),
    ),
    "vllm_test_hermes_parser_non_streaming_no_tool_call": (
        "This is not a tool call.",
        Expect(content="This is not a tool call."),
    ),
    "vllm_test_hermes_parser_non_streaming_tool_call_between_tags": (
        '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}}\n</tool_call>',
        Expect(calls=(("final_answer", {"trigger": True}),)),
    ),
    "vllm_test_hermes_parser_non_streaming_tool_call_until_eos": (
        '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}}',
        Expect(calls=(("final_answer", {"trigger": True}),), recoveries=("call_close_missing",)),
    ),
    # vLLM: no call. FrogDesk: no call either, but the model is told (invariant 12).
    "vllm_test_hermes_parser_non_streaming_tool_call_invalid_json": (
        '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}',
        Expect(errors=("the reply ended before the call's JSON object closed",)),
    ),
    # SGLang, Qwen25Detector
    "sglang_test_has_tool_call_true_and_single_tool_call": (
        WEATHER,
        Expect(calls=(("get_weather", {"city": "Beijing"}),)),
    ),
    "sglang_test_has_tool_call_false_plain_text": (
        "The weather in Beijing is sunny today.",
        Expect(content="The weather in Beijing is sunny today."),
    ),
    "sglang_test_has_tool_call_false_only_closing_tag": (
        "some text </tool_call> trailing",
        Expect(content="some text </tool_call> trailing"),
    ),
    "sglang_test_normal_text_before_tool_call": (
        'Let me check the weather. <tool_call>\n{"name": "get_weather", '
        '"arguments": {"city": "Tokyo"}}\n</tool_call>',
        Expect(content="Let me check the weather.", calls=(("get_weather", {"city": "Tokyo"}),)),
    ),
    "sglang_test_parallel_tool_calls": (
        WEATHER
        + '\n<tool_call>\n{"name": "search", "arguments": {"query": "restaurants"}}\n</tool_call>',
        Expect(calls=(("get_weather", {"city": "Beijing"}), ("search", {"query": "restaurants"}))),
    ),
    "sglang_test_tool_call_with_multiple_arguments": (
        '<tool_call>\n{"name": "get_weather", "arguments": '
        '{"city": "London", "unit": "celsius"}}\n</tool_call>',
        Expect(calls=(("get_weather", {"city": "London", "unit": "celsius"}),)),
    ),
    # SGLang skips the broken block; FrogDesk tells the model about it and keeps the valid call.
    "sglang_test_malformed_json_is_skipped": (
        "<tool_call>\n{not valid json}\n</tool_call>\n"
        '<tool_call>\n{"name": "search", "arguments": {"query": "books"}}\n</tool_call>',
        Expect(calls=(("search", {"query": "books"}),), errors=("the call is not valid JSON",)),
    ),
    "sglang_test_streaming_text_then_tool_call": (
        "I'll look that up. "
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Tokyo", "unit": "celsius"}}\n</tool_call>',
        Expect(
            content="I'll look that up.",
            calls=(("get_weather", {"city": "Tokyo", "unit": "celsius"}),),
        ),
    ),
    "sglang_test_streaming_partial_bot_token_is_buffered": (
        'hello <tool_call>\n{"name": "search", "arguments": {"query": "hi"}}\n</tool_call>',
        Expect(content="hello", calls=(("search", {"query": "hi"}),)),
    ),
    # The partial `<tool` is held while it may grow; at the reply's end it is content.
    "sglang_test_streaming_partial_bot_token_does_not_leak_prefix": (
        "I think <tool",
        Expect(content="I think <tool"),
    ),
    # llama.cpp, test-chat.cpp (Hermes 2 Pro)
    "llamacpp_hermes_call": (
        f"<tool_call>\n{SPECIAL_JSON}\n</tool_call>",
        Expect(calls=(("special_function", SPECIAL),)),
    ),
    "llamacpp_hermes_call_content": (
        f"Hello, world!\nWhat's up?<tool_call>\n{SPECIAL_JSON}\n</tool_call>",
        Expect(content="Hello, world!\nWhat's up?", calls=(("special_function", SPECIAL),)),
    ),
    "llamacpp_hermes_thoughts_forced_open": (
        f"I'm\nthinking</think>\n<tool_call>{SPECIAL_JSON}</tool_call>",
        Expect(
            reasoning="I'm\nthinking",
            calls=(("special_function", SPECIAL),),
            starts_in_reasoning=True,
        ),
    ),
    "llamacpp_hermes_tool_tag": (
        f"<tool>\n  {SPECIAL_JSON}\n</tool>",
        Expect(calls=(("special_function", SPECIAL),), recoveries=("wrapper_tag",)),
    ),
    "llamacpp_hermes_tools_tag": (
        f"<tools>\n  {SPECIAL_JSON}\n</tools>",
        Expect(calls=(("special_function", SPECIAL),), recoveries=("wrapper_tag",)),
    ),
    "llamacpp_hermes_response_tag": (
        f"<response>\n  {SPECIAL_JSON}\n</response>",
        Expect(calls=(("special_function", SPECIAL),), recoveries=("wrapper_tag",)),
    ),
    "llamacpp_hermes_xml_fence_around_response_tag": (
        f"```xml\n<response>\n    {SPECIAL_JSON}\n</response>\n```",
        Expect(calls=(("special_function", SPECIAL),), recoveries=("fenced_json", "wrapper_tag")),
    ),
    "llamacpp_hermes_xml_fence": (
        f"```xml\n  {SPECIAL_JSON}\n```",
        Expect(calls=(("special_function", SPECIAL),), recoveries=("fenced_json",)),
    ),
    "llamacpp_hermes_plain_fence_indented": (
        f"```\n  {SPECIAL_JSON}\n```",
        Expect(calls=(("special_function", SPECIAL),), recoveries=("fenced_json",)),
    ),
    "llamacpp_hermes_plain_fence": (
        f"```\n{SPECIAL_JSON}\n```",
        Expect(calls=(("special_function", SPECIAL),), recoveries=("fenced_json",)),
    ),
    "llamacpp_hermes_json_fence": (
        f"```json\n  {SPECIAL_JSON}\n```",
        Expect(calls=(("special_function", SPECIAL),), recoveries=("fenced_json",)),
    ),
    "llamacpp_hermes_json_fence_function_call_tag": (
        f"```json\n\n                    <function_call> {SPECIAL_JSON} \n"
        "                    </function_call> \n``` ",
        Expect(calls=(("special_function", SPECIAL),), recoveries=("fenced_json", "wrapper_tag")),
    ),
    "llamacpp_hermes_json_tag": (
        f"<json>\n  {SPECIAL_JSON}\n</json>",
        Expect(calls=(("special_function", SPECIAL),), recoveries=("wrapper_tag",)),
    ),
    "llamacpp_hermes_xml_tag_multiline_object": (
        '<xml>\n  {\n    "name": "special_function", "arguments": {"arg1": 1}\n  }\n</xml>',
        Expect(calls=(("special_function", SPECIAL),), recoveries=("wrapper_tag",)),
    ),
    "llamacpp_hermes_JSON_tag": (
        f"<JSON>\n  {SPECIAL_JSON}\n</JSON>",
        Expect(calls=(("special_function", SPECIAL),), recoveries=("wrapper_tag",)),
    ),
    "llamacpp_hermes_bare_object": (
        SPECIAL_JSON,
        Expect(calls=(("special_function", SPECIAL),), recoveries=("bare_json",)),
    ),
    "llamacpp_hermes_bare_object_newline_after_brace": (
        '{\n  "name": "special_function", "arguments": {"arg1": 1}}',
        Expect(calls=(("special_function", SPECIAL),), recoveries=("bare_json",)),
    ),
    "llamacpp_hermes_multiple_calls": (
        f"<tool_call>\n{SPECIAL_JSON}\n</tool_call>\n"
        '<tool_call>\n{"name": "python", "arguments": {"code":"print(\'hello\')"}}\n</tool_call>',
        Expect(calls=(("special_function", SPECIAL), ("python", {"code": "print('hello')"}))),
    ),
    "llamacpp_hermes_not_a_tool_call_prefix": (
        f"This is not a tool call:\n{SPECIAL_JSON}",
        Expect(
            content="This is not a tool call:",
            calls=(("special_function", SPECIAL),),
            recoveries=("bare_json",),
        ),
    ),
    "llamacpp_hermes_plain_content": (
        "Hello, world!\nWhat's up?",
        Expect(content="Hello, world!\nWhat's up?"),
    ),
    "llamacpp_hermes_thoughts": (
        "<think>I'm\nthinking</think>Hello, world!\nWhat's up?",
        Expect(reasoning="I'm\nthinking", content="Hello, world!\nWhat's up?"),
    ),
    "llamacpp_hermes_thoughts_unopened": (
        "I'm\nthinking</think>Hello, world!\nWhat's up?",
        Expect(
            reasoning="I'm\nthinking",
            content="Hello, world!\nWhat's up?",
            starts_in_reasoning=True,
        ),
    ),
    # llama.cpp keeps an empty fenced object as content; so does FrogDesk (it names no call).
    "llamacpp_hermes_thoughts_unparsed_md": (
        "<think>I'm\nthinking</think>Hello, world!\nWhat's up?\n```json\n{}```",
        Expect(reasoning="I'm\nthinking", content="Hello, world!\nWhat's up?\n```json\n{}```"),
    ),
    # llama.cpp keeps this as reasoning; FrogDesk reads a call the reasoning never closed as a
    # call (as its XML dialect does), so the broken one is said to the model.
    "llamacpp_hermes_think_open_call_not_json": (
        "<think><tool_call>nah uhg</tool_call>",
        Expect(errors=("expected a JSON object after <tool_call>",)),
    ),
    # FrogDesk's own: the drifts of issue 30 and Qwen2.5-Coder's habits.
    "fenced_json_after_prose_qwen25_coder": (
        "I'll read the file first.\n```json\n"
        '{"name": "Read", "arguments": {"file_path": "calc.py"}}\n```',
        Expect(
            content="I'll read the file first.",
            calls=(("Read", {"file_path": "calc.py"}),),
            recoveries=("fenced_json",),
        ),
    ),
    "arguments_given_as_a_json_string": (
        '<tool_call>\n{"name": "Bash", "arguments": "{\\"command\\": \\"ls\\"}"}\n</tool_call>',
        Expect(calls=(("Bash", {"command": "ls"}),), recoveries=("arguments_as_string",)),
    ),
    "arguments_as_string_in_a_fence": (
        '```json\n{"name": "Glob", "arguments": "{\\"pattern\\": \\"*.py\\"}"}\n```',
        Expect(
            calls=(("Glob", {"pattern": "*.py"}),),
            recoveries=("fenced_json", "arguments_as_string"),
        ),
    ),
    "call_close_missing_before_text": (
        '<tool_call>\n{"name": "Glob", "arguments": {"pattern": "*"}}\nDone.',
        Expect(
            content="Done.", calls=(("Glob", {"pattern": "*"}),), recoveries=("call_close_missing",)
        ),
    ),
    "two_objects_in_one_wrapper": (
        '<tool_call>\n{"name": "Glob", "arguments": {"pattern": "a"}}\n'
        '{"name": "Glob", "arguments": {"pattern": "b"}}\n</tool_call>',
        Expect(
            calls=(("Glob", {"pattern": "a"}), ("Glob", {"pattern": "b"})),
            recoveries=("call_close_missing", "bare_json"),
        ),
    ),
    "value_holding_the_closing_tag_and_braces": (
        '<tool_call>\n{"name": "Write", "arguments": {"file_path": "t.txt", '
        '"content": "</tool_call> } { \\" ```\\n"}}\n</tool_call>',
        Expect(calls=(("Write", {"file_path": "t.txt", "content": '</tool_call> } { " ```\n'}),)),
    ),
    "json_in_content_that_is_no_call": (
        'The config is:\n{"name": "demo", "version": 2}\nand\n```json\n{"a": [1, 2]}\n```',
        Expect(
            content='The config is:\n{"name": "demo", "version": 2}\nand\n```json\n{"a": [1, 2]}\n```'
        ),
    ),
    "code_fence_that_is_no_call": (
        "Run this:\n```python\nprint({'name': 1})\n```",
        Expect(content="Run this:\n```python\nprint({'name': 1})\n```"),
    ),
    "loose_object_naming_a_tool_cut_at_the_end": (
        '```json\n{"name": "Read", "arguments": {"file_path": "calc.py"',
        Expect(errors=("the reply ended before the call's JSON object closed",)),
    ),
    "loose_object_naming_a_tool_without_arguments": (
        '{"name": "Read", "file_path": "calc.py"}',
        Expect(errors=('the call has no "arguments"',)),
    ),
    "unknown_tool_in_a_wrapper_goes_to_the_runner": (
        '<tool_call>\n{"name": "Delete", "arguments": {"path": "x"}}\n</tool_call>',
        Expect(calls=(("Delete", {"path": "x"}),)),
    ),
    "unknown_tool_strict": (
        '<tool_call>\n{"name": "Delete", "arguments": {"path": "x"}}\n</tool_call>',
        Expect(errors=("Unknown function 'Delete'",), strict=True),
    ),
    "missing_required_strict": (
        '<tool_call>\n{"name": "Read", "arguments": {}}\n</tool_call>',
        Expect(errors=("missing required parameter 'file_path'",), strict=True),
    ),
    "arguments_not_an_object_run_with_none": (
        '<tool_call>\n{"name": "Glob", "arguments": [1]}\n</tool_call>',
        Expect(calls=(("Glob", {}),)),
    ),
    "xml_inside_a_hermes_wrapper_is_an_error": (
        "<tool_call>\n<function=Read>\n<parameter=file_path>\na\n</parameter>\n</function>\n</tool_call>",
        Expect(errors=("expected a JSON object after <tool_call>",)),
    ),
    "call_in_reasoning_stays_reasoning": (
        'Maybe <tool_call>{"name": "Read"}</tool_call> later.</think>Answer.',
        Expect(
            reasoning='Maybe <tool_call>{"name": "Read"}</tool_call> later.',
            content="Answer.",
            recoveries=("call_in_reasoning",),
            starts_in_reasoning=True,
        ),
    ),
    "reasoning_never_closed_before_a_call": (
        'Let me look.\n<tool_call>\n{"name": "Read", "arguments": {"file_path": "a"}}\n</tool_call>',
        Expect(
            reasoning="Let me look.",
            calls=(("Read", {"file_path": "a"}),),
            recoveries=("think_close_missing",),
            starts_in_reasoning=True,
        ),
    ),
    "stray_close_after_a_bare_object_is_eaten": (
        '{"name": "Glob", "arguments": {"pattern": "*"}}\n</tool_call>\nok',
        Expect(content="ok", calls=(("Glob", {"pattern": "*"}),), recoveries=("bare_json",)),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_case_whole_char_by_char_and_split_everywhere(case: str) -> None:
    text, expect = CASES[case]
    check(text, expect)


def test_calls_are_numbered_and_rendered_back_as_the_template_writes_them() -> None:
    call = ToolCall("Read", {"file_path": "ä.py"}, id="x")
    text = render_tool_call_hermes(call)
    assert text == '<tool_call>\n{"name": "Read", "arguments": {"file_path": "ä.py"}}\n</tool_call>'
    reply = outcome([text, "\n", text], reasoning=False, strict=False)
    assert [c[2] for c in reply[2]] == ["call_0", "call_1"]


# Hostile input ------------------------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "9" * (sys.get_int_max_str_digits() + 700)


def test_deep_nesting_is_a_malformed_call_not_a_crash() -> None:
    text = f'<tool_call>\n{{"name": "Write", "arguments": {{"content": {DEEP}}}}}\n</tool_call>'
    reply = outcome([text], reasoning=False, strict=False)
    assert reply[2] == [] and len(reply[3]) == 1
    assert "nested too deeply" in reply[3][0][1]
    # A loose object nested too deeply that names a tool is said to the model as well.
    loose = outcome([f'{{"name": "Write", "arguments": {DEEP}}}'], reasoning=False, strict=False)
    assert loose[2] == [] and "nested too deeply" in loose[3][0][1]
    # Control: the same nesting a hundred deep is a call.
    shallow = "[" * 100 + "]" * 100
    ok = outcome(
        [f'<tool_call>\n{{"name": "Write", "arguments": {{"content": {shallow}}}}}\n</tool_call>'],
        reasoning=False,
        strict=False,
    )
    assert len(ok[2]) == 1 and ok[3] == []


def test_a_number_past_the_digit_limit_is_a_malformed_call() -> None:
    text = f'<tool_call>\n{{"name": "Read", "arguments": {{"offset": {HUGE}}}}}\n</tool_call>'
    reply = outcome([text], reasoning=False, strict=False)
    assert reply[2] == [] and "digits" in reply[3][0][1]
    control = (
        f'<tool_call>\n{{"name": "Read", "arguments": {{"offset": {HUGE[:100]}}}}}\n</tool_call>'
    )
    assert len(outcome([control], reasoning=False, strict=False)[2]) == 1


def test_a_long_call_streamed_in_small_pieces_parses_as_whole() -> None:
    # The object scan keeps its place between pieces: the call is read once, not per piece.
    value = "x\\n" * (1 << 15)
    text = (
        '<tool_call>\n{"name": "Write", "arguments": {"file_path": "a", '
        f'"content": "{value}"}}}}\n</tool_call>'
    )
    pieces = [text[i : i + 4] for i in range(0, len(text), 4)]
    reply = outcome(pieces, reasoning=False, strict=False)
    assert reply == outcome([text], reasoning=False, strict=False)
    assert len(reply[2]) == 1 and reply[2][0][1]["content"] == "x\n" * (1 << 15)


def test_a_long_indented_line_is_not_held_as_a_call_head() -> None:
    text = " " * 10_000 + "hello"
    pieces = list(text)
    reply = outcome(pieces, reasoning=False, strict=False)
    assert reply[1] == "hello" and reply[2] == []
