"""Unit tests of the streaming Qwen3-Coder XML tool-call parser and the think split."""

from __future__ import annotations

from typing import Any

import pytest

from frogdesk.engine.chat import (
    ContentDelta,
    EngineEvent,
    ReasoningDelta,
    Reply,
    ToolCall,
    ToolCallError,
    ToolCallEvent,
    ToolSchema,
)
from frogdesk.engine.toolcall.parser import (
    QwenXmlToolParser,
    parse_reply,
    render_tool_call_xml,
)


def tool(name: str, properties: dict[str, Any], required: list[str], **extra: Any) -> ToolSchema:
    params: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    params.update(extra)
    return {
        "type": "function",
        "function": {"name": name, "description": name, "parameters": params},
    }


TOOLS = [
    tool(
        "Read",
        {
            "file_path": {"type": "string"},
            "offset": {"type": "integer"},
            "limit": {"type": "integer"},
        },
        ["file_path"],
    ),
    tool(
        "Write",
        {"file_path": {"type": "string"}, "content": {"type": "string"}},
        ["file_path", "content"],
    ),
    tool(
        "Edit",
        {
            "file_path": {"type": "string"},
            "old_string": {"type": "string"},
            "new_string": {"type": "string"},
            "replace_all": {"type": "boolean"},
        },
        ["file_path", "old_string", "new_string"],
    ),
    tool(
        "Bash",
        {"command": {"type": "string"}, "timeout": {"type": "number"}},
        ["command"],
    ),
    tool(
        "Typed",
        {
            "items": {"type": "array"},
            "options": {"type": "object"},
            "maybe": {"type": ["integer", "null"]},
            "nothing": {"type": "null"},
            "loose": {},
        },
        [],
    ),
]


def gather(events: list[EngineEvent]) -> Reply:
    reply = Reply()
    for event in events:
        reply.add(event)
    return reply


def parse(text: str, **kwargs: Any) -> Reply:
    parser = QwenXmlToolParser(TOOLS, **kwargs)
    return gather(parser.feed(text) + parser.finish())


def call(name: str, **arguments: Any) -> str:
    return render_tool_call_xml(ToolCall(name, arguments))


def test_reasoning_content_and_one_call() -> None:
    text = "I should read it.\n</think>\n\nReading.\n" + call("Read", file_path="a.py", offset=3)
    reply = parse(text)
    assert reply.reasoning == "I should read it."
    assert reply.content == "Reading."
    assert reply.tool_calls == [ToolCall("Read", {"file_path": "a.py", "offset": 3}, id="call_0")]
    assert reply.errors == []


def test_several_calls_get_distinct_ids_and_keep_order() -> None:
    text = (
        "x</think>"
        + call("Read", file_path="a")
        + "\n"
        + call("Bash", command="ls -la", timeout=2.5)
    )
    reply = parse(text)
    assert [(c.name, c.id) for c in reply.tool_calls] == [("Read", "call_0"), ("Bash", "call_1")]
    assert reply.tool_calls[1].arguments == {"command": "ls -la", "timeout": 2.5}


def test_id_prefix_is_used() -> None:
    parser = QwenXmlToolParser(TOOLS, id_prefix="turn3_")
    events = parser.feed("</think>" + call("Read", file_path="a")) + parser.finish()
    assert gather(events).tool_calls[0].id == "turn3_0"


def test_string_values_are_verbatim() -> None:
    content = (
        "def f():\n    return a < b and '</parameter' != '<x>'\n\n<tag attr=\"1\">text</tag>\n"
    )
    text = "</think>" + call("Write", file_path="f.py", content=content)
    reply = parse(text)
    assert reply.tool_calls[0].arguments["content"] == content


def test_closing_parameter_tag_inside_a_value_is_kept_unless_a_tag_follows() -> None:
    content = "a</parameter>b\n</parameter>\n\nc"
    reply = parse("</think>" + call("Write", file_path="p", content=content))
    assert reply.tool_calls[0].arguments["content"] == content


def test_the_one_string_the_format_cannot_carry() -> None:
    content = "a</parameter>\n</function>"
    reply = parse("</think>" + call("Write", file_path="p", content=content))
    assert not reply.tool_calls or reply.tool_calls[0].arguments.get("content") != content


def test_only_one_newline_is_stripped_on_each_side() -> None:
    reply = parse("</think>" + call("Write", file_path="p", content="\n\nmiddle\n\n"))
    assert reply.tool_calls[0].arguments["content"] == "\n\nmiddle\n\n"
    compact = "</think><tool_call><function=Write><parameter=file_path>p</parameter><parameter=content>x</parameter></function></tool_call>"
    assert parse(compact).tool_calls[0].arguments == {"file_path": "p", "content": "x"}


@pytest.mark.parametrize(
    ("raw", "value"),
    [("true", True), ("True", True), ("false", False), ("FALSE", False)],
)
def test_booleans_accept_json_and_python_spelling(raw: str, value: bool) -> None:
    text = f"</think><tool_call>\n<function=Edit>\n<parameter=file_path>\nf\n</parameter>\n<parameter=old_string>\na\n</parameter>\n<parameter=new_string>\nb\n</parameter>\n<parameter=replace_all>\n{raw}\n</parameter>\n</function>\n</tool_call>"
    assert parse(text).tool_calls[0].arguments["replace_all"] is value


def test_typed_values() -> None:
    arguments = {"items": [1, "two", None], "options": {"k": [1.5]}, "maybe": None, "nothing": None}
    reply = parse("</think>" + call("Typed", **arguments))
    assert reply.tool_calls[0].arguments == arguments
    reply = parse("</think>" + call("Typed", maybe=7, loose="plain text"))
    assert reply.tool_calls[0].arguments == {"maybe": 7, "loose": "plain text"}
    reply = parse("</think>" + call("Typed", loose={"a": 1}))
    assert reply.tool_calls[0].arguments == {"loose": {"a": 1}}


def test_number_keeps_integers_integral() -> None:
    reply = parse("</think>" + call("Bash", command="x", timeout=30))
    assert reply.tool_calls[0].arguments["timeout"] == 30
    assert isinstance(reply.tool_calls[0].arguments["timeout"], int)


def error_of(text: str, *, strict: bool = True) -> ToolCallError:
    reply = parse(text, strict=strict)
    assert reply.tool_calls == []
    assert len(reply.errors) == 1, reply.errors
    return reply.errors[0]


def test_unknown_function() -> None:
    error = error_of("</think>" + call("Delete", file_path="a"))
    assert error.name == "Delete"
    assert "Unknown function 'Delete'" in error.error
    assert "Read, Write, Edit, Bash, Typed" in error.error
    assert error.raw.startswith("<tool_call>") and error.raw.endswith("</tool_call>")


def test_unknown_parameter_names_the_known_ones() -> None:
    error = error_of("</think>" + call("Read", file_path="a", path="b"))
    assert "unknown parameter 'path'" in error.error
    assert "file_path, offset, limit" in error.error


def test_additional_properties_true_keeps_unknown_parameters() -> None:
    tools = [tool("Open", {"a": {"type": "string"}}, [], additionalProperties=True)]
    events = parse_reply("</think>" + call("Open", a="1", extra="2"), tools)
    assert gather(events).tool_calls[0].arguments == {"a": "1", "extra": "2"}


def test_missing_required_parameter() -> None:
    error = error_of("</think>" + call("Write", file_path="a"))
    assert "missing required parameter 'content'" in error.error


@pytest.mark.parametrize(
    ("arguments", "needle"),
    [
        (
            {"file_path": "a", "offset": "three"},
            "parameter 'offset' must be an integer, got 'three'",
        ),
        ({"file_path": "a", "offset": "1.5"}, "must be an integer"),
    ],
)
def test_bad_integer(arguments: dict[str, Any], needle: str) -> None:
    assert needle in error_of("</think>" + call("Read", **arguments)).error


def test_bad_values_of_other_types() -> None:
    assert "must be a JSON array" in error_of("</think>" + call("Typed", items="[1, 2")).error
    assert "must be a JSON object" in error_of("</think>" + call("Typed", options="[1]")).error
    assert (
        "must be true or false"
        in error_of(
            "</think>"
            + call("Edit", file_path="f", old_string="a", new_string="b", replace_all="maybe")
        ).error
    )
    assert (
        "must be a finite number"
        in error_of("</think>" + call("Bash", command="x", timeout="nan")).error
    )
    assert "must be null" in error_of("</think>" + call("Typed", nothing="0")).error


def test_duplicate_parameter() -> None:
    text = "</think><tool_call>\n<function=Read>\n<parameter=file_path>\na\n</parameter>\n<parameter=file_path>\nb\n</parameter>\n</function>\n</tool_call>"
    assert "given more than once" in error_of(text).error


def test_missing_function_close_is_recovered() -> None:
    text = (
        "</think><tool_call>\n<function=Read>\n<parameter=file_path>\na\n</parameter>\n</tool_call>"
    )
    reply = parse(text, strict=True)
    assert reply.errors == []
    assert reply.tool_calls == [ToolCall("Read", {"file_path": "a"}, id="call_0")]
    assert reply.recoveries == ["function_close_missing"]


def test_missing_function_tag() -> None:
    error = error_of('</think><tool_call>\n{"name": "Read", "arguments": {}}\n</tool_call>')
    assert "expected <function=NAME>" in error.error


def test_junk_after_function_close() -> None:
    text = "</think><tool_call>\n<function=Read>\n<parameter=file_path>\na\n</parameter>\n</function>\noops\n</tool_call>"
    assert "expected </tool_call> right after </function>" in error_of(text).error


@pytest.mark.parametrize(
    ("cut", "needle"),
    [
        ("<tool_call>\n", "ended before <function=NAME>"),
        ("<tool_call>\n<function=Re", "ended inside the <function=NAME> tag"),
        ("<tool_call>\n<function=Read>\n", "ended before </function> and </tool_call>"),
        (
            "<tool_call>\n<function=Read>\n<parameter=file_path>\na.py",
            "inside the value of 'file_path'",
        ),
        (
            "<tool_call>\n<function=Read>\n<parameter=file_path>\na\n</parameter>",
            "after the value of 'file_path'",
        ),
        (
            "<tool_call>\n<function=Read>\n<parameter=file_path>\na\n</parameter>\n</function>",
            "ended before </tool_call>",
        ),
    ],
)
def test_truncated_call_becomes_an_error(cut: str, needle: str) -> None:
    error = error_of("</think>" + cut)
    assert needle in error.error
    assert error.raw == cut


def test_parsing_resumes_after_a_bad_call() -> None:
    text = "</think>" + call("Nope") + "between" + call("Read", file_path="ok")
    reply = parse(text, strict=True)
    assert len(reply.errors) == 1
    assert reply.content == "between"
    assert reply.tool_calls == [ToolCall("Read", {"file_path": "ok"}, id="call_0")]


def test_no_think_close_means_all_reasoning() -> None:
    reply = parse("still thinking about <it> and more")
    assert reply.reasoning == "still thinking about <it> and more"
    assert reply.content == ""


def test_tool_call_inside_reasoning_closes_it() -> None:
    reply = parse("I will read.\n" + call("Read", file_path="a"))
    assert reply.reasoning == "I will read."
    assert reply.tool_calls[0].arguments == {"file_path": "a"}


def test_explicit_think_open_with_thinking_off() -> None:
    reply = parse("\n<think>\nhmm\n</think>\n\nHello", starts_in_reasoning=False)
    assert (reply.reasoning, reply.content) == ("hmm", "Hello")


def test_explicit_think_open_when_already_reasoning() -> None:
    reply = parse("<think>\nhmm\n</think>\n\nHello")
    assert (reply.reasoning, reply.content) == ("hmm", "Hello")


def test_thinking_off_is_all_content() -> None:
    reply = parse("Just an answer </think> with a tag", starts_in_reasoning=False)
    assert reply.reasoning == ""
    assert reply.content == "Just an answer </think> with a tag"


def test_partial_tags_are_held_back_until_resolved() -> None:
    parser = QwenXmlToolParser(TOOLS, starts_in_reasoning=False)
    assert parser.feed("Answer <") == [ContentDelta("Answer")]
    assert parser.feed("tool") == []
    assert parser.feed("box> is fine") == [ContentDelta(" <toolbox> is fine")]
    assert parser.feed(" <tool_c") == []
    assert parser.finish() == [ContentDelta(" <tool_c")]


def test_partial_think_close_is_held_back() -> None:
    parser = QwenXmlToolParser(TOOLS)
    assert parser.feed("a</thi") == [ReasoningDelta("a")]
    assert parser.feed("nk>b") == [ContentDelta("b")]


def test_calls_stream_as_complete_events_only() -> None:
    parser = QwenXmlToolParser(TOOLS)
    text = "</think>" + call("Read", file_path="a")
    events: list[EngineEvent] = []
    for index, char in enumerate(text):
        new = parser.feed(char)
        if index < len(text) - 1:
            assert not any(isinstance(e, ToolCallEvent) for e in new)
        events.extend(new)
    assert [type(e) for e in events] == [ToolCallEvent]
    assert parser.finish() == []


def test_content_between_and_after_calls() -> None:
    reply = parse("</think>" + call("Read", file_path="a") + "\n\nAnd done.\n")
    assert reply.content == "And done."


def test_no_tools_offered() -> None:
    events = parse_reply("</think>" + call("Read", file_path="a"), [], strict=True)
    error = gather(events).errors[0]
    assert "available functions are: none" in error.error


def test_render_matches_the_documented_shape() -> None:
    text = render_tool_call_xml(
        ToolCall("Read", {"file_path": "a", "offset": 2, "x": {"é": [True]}})
    )
    assert text == (
        "<tool_call>\n<function=Read>\n<parameter=file_path>\na\n</parameter>\n"
        "<parameter=offset>\n2\n</parameter>\n"
        '<parameter=x>\n{"é": [true]}\n</parameter>\n</function>\n</tool_call>'
    )


def test_lenient_mode_leaves_argument_checks_to_the_tools() -> None:
    text = (
        "</think><tool_call>\n<function=Read>\n<parameter=path>\na.py\n</parameter>\n"
        "<parameter=offset>\nthree\n</parameter>\n<parameter=limit>\n5\n</parameter>\n"
        "<parameter=limit>\n6\n</parameter>\n</function>\n</tool_call>"
        + call("Delete", target="x")
        + "<tool_call>\n<function=>\n</function>\n</tool_call>"
    )
    reply = parse(text, strict=False)
    assert reply.tool_calls == [
        ToolCall("Read", {"path": "a.py", "offset": "three", "limit": 6}, id="call_0"),
        ToolCall("Delete", {"target": "x"}, id="call_1"),
    ]
    assert len(reply.errors) == 1 and "Unknown function ''" in reply.errors[0].error


def test_lenient_mode_still_reports_broken_structure() -> None:
    parser = QwenXmlToolParser(TOOLS, strict=False)
    events = (
        parser.feed("</think><tool_call>\n<function=Read>\n<parameter=file_path>\na")
        + parser.finish()
    )
    assert "missing </parameter>" in gather(events).errors[0].error


def test_default_is_leaf_lenient() -> None:
    """By default the tools, not the parser, answer for unknown tools and missing arguments."""
    reply = parse("</think>" + call("Delete", file_path="a") + call("Read", path="b", extra="1"))
    assert reply.errors == []
    assert [c.name for c in reply.tool_calls] == ["Delete", "Read"]
    assert reply.tool_calls[1].arguments == {"path": "b", "extra": "1"}
