"""Drifts from the Qwen3-Coder XML format: each recovered where it has one reading, refused where it has two.

Every case is parsed whole, one character at a time, and split in two at every position;
all must give the same reply.
"""

from __future__ import annotations

from typing import Any

import pytest

from frogdesk.engine.chat import EngineEvent, Reply, ToolCall, ToolSchema
from frogdesk.engine.toolcall.parser import QwenXmlToolParser
from frogdesk.engine.toolcall.scan import Drift


def tool(name: str, properties: dict[str, Any], required: list[str]) -> ToolSchema:
    params = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "parameters": params}}


TOOLS = [
    tool("Weather", {"city": {"type": "string"}, "state": {"type": "string"}}, ["city", "state"]),
    tool("Note", {"title": {"type": "string"}, "body": {"type": "string"}}, ["title"]),
    tool("Write", {"file_path": {"type": "string"}, "content": {"type": "string"}}, ["file_path"]),
    tool("Tag", {"names": {"type": "array"}, "meta": {"type": "object"}}, []),
    tool("Bash", {"command": {"type": "string"}, "timeout": {"type": "number"}}, ["command"]),
]


def _reply(chunks: list[str], **kwargs: Any) -> Reply:
    parser = QwenXmlToolParser(TOOLS, **kwargs)
    events: list[EngineEvent] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.finish())
    reply = Reply()
    for event in events:
        reply.add(event)
    return reply


def _key(reply: Reply) -> tuple[Any, ...]:
    return (
        reply.reasoning,
        reply.content,
        reply.tool_calls,
        [(e.name, e.error, e.raw) for e in reply.errors],
        sorted(reply.recoveries),
    )


def parse(text: str, **kwargs: Any) -> Reply:
    """The reply of `text`, checked to be the same whole, per character and split anywhere."""
    whole = _reply([text], **kwargs)
    assert _key(_reply(list(text), **kwargs)) == _key(whole)
    for cut in range(len(text) + 1):
        assert _key(_reply([text[:cut], text[cut:]], **kwargs)) == _key(whole), cut
    return whole


def calls(reply: Reply) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.arguments) for c in reply.tool_calls]


# 1. A <function=...> block without the <tool_call> wrapper ---------------------------


def test_bare_function_block_is_a_call() -> None:
    text = "</think>\nChecking.\n<function=Weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n</function>"
    reply = parse(text)
    assert calls(reply) == [("Weather", {"city": "Dallas", "state": "TX"})]
    assert reply.content == "Checking."
    assert reply.recoveries == [Drift.BARE_FUNCTION]


def test_bare_function_block_with_a_closing_tool_call_tag() -> None:
    text = "</think><function=Bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>\nDone."
    reply = parse(text)
    assert calls(reply) == [("Bash", {"command": "ls"})]
    assert reply.content == "Done."


def test_prose_about_a_function_tag_stays_content() -> None:
    text = "</think>Write <function=Bash> and then the parameters; <function=Other>x</function>."
    reply = parse(text)
    assert reply.tool_calls == [] and reply.errors == [] and reply.recoveries == []
    assert reply.content == text[len("</think>") :]


def test_unfinished_bare_block_stays_content() -> None:
    text = "</think><function=Bash>\n<parameter=command>\nls"
    reply = parse(text)
    assert reply.tool_calls == [] and reply.errors == []
    assert reply.content == text[len("</think>") :]


# 2. Missing or drifted </parameter> ------------------------------------------------------


def test_missing_parameter_close_before_the_next_known_parameter() -> None:
    text = "</think><tool_call>\n<function=Weather>\n<parameter=city>\nDallas\n<parameter=state>\nTX\n</parameter>\n</function>\n</tool_call>"
    reply = parse(text)
    assert calls(reply) == [("Weather", {"city": "Dallas", "state": "TX"})]
    assert reply.recoveries == [Drift.PARAMETER_CLOSE_MISSING]


def test_missing_parameter_close_before_function_close() -> None:
    text = "</think><tool_call>\n<function=Bash>\n<parameter=command>\nls -la\n</function>\n</tool_call>"
    reply = parse(text)
    assert calls(reply) == [("Bash", {"command": "ls -la"})]
    assert reply.recoveries == [Drift.PARAMETER_CLOSE_MISSING]


@pytest.mark.parametrize("marker", ["</parameter1>", "</parameter_function>", "</parameter"])
def test_drifted_parameter_close(marker: str) -> None:
    text = f"</think><tool_call>\n<function=Weather>\n<parameter=city>\nDallas\n{marker}\n<parameter=state>\nTX\n{marker}\n</function>\n</tool_call>"
    reply = parse(text)
    assert calls(reply) == [("Weather", {"city": "Dallas", "state": "TX"})]
    assert reply.recoveries == [Drift.PARAMETER_CLOSE_DRIFTED] * 2


def test_missing_parameter_close_with_two_readings_is_refused() -> None:
    """`body` is optional: `title` may hold the tag or end before it; the schema cannot tell."""
    text = "</think><tool_call>\n<function=Note>\n<parameter=title>\nPlan\n<parameter=body>\nsteps\n</parameter>\n</function>\n</tool_call>"
    reply = parse(text)
    assert reply.tool_calls == []
    [error] = reply.errors
    assert "reads two ways: with parameters (title) or (title, body)" in error.error
    assert "<tool_call>\n<function=NAME>\n<parameter=KEY>" in error.error


def test_the_exact_reading_wins_when_the_recovered_one_does_not_fit() -> None:
    """`file_path` is given before: the tag inside `content` cannot open it again."""
    content = "a fixture:\n<parameter=file_path>\nnot a path"
    text = f"</think><tool_call>\n<function=Write>\n<parameter=file_path>\nf.txt\n</parameter>\n<parameter=content>\n{content}\n</parameter>\n</function>\n</tool_call>"
    reply = parse(text)
    assert calls(reply) == [("Write", {"file_path": "f.txt", "content": content})]
    assert reply.recoveries == []


# 3. A value holding </parameter> and tag-like text ---------------------------------------


def test_value_with_closing_tag_and_an_unknown_parameter_is_refused() -> None:
    text = "</think><tool_call>\n<function=Write>\n<parameter=file_path>\nx.xml\n</parameter>\n<parameter=content>\n<a>\n</parameter>\n<parameter=b>\n</a>\n</parameter>\n</function>\n</tool_call>"
    reply = parse(text)
    assert reply.tool_calls == []
    [error] = reply.errors
    assert "'b' is not a parameter of the tool" in error.error


def test_value_with_closing_tag_and_a_repeated_parameter_is_refused() -> None:
    text = "</think><tool_call>\n<function=Write>\n<parameter=file_path>\nx\n</parameter>\n<parameter=file_path>\ny\n</parameter>\n</function>\n</tool_call>"
    [error] = parse(text).errors
    assert "'file_path' is given twice" in error.error


def test_positive_control_value_with_closing_tag_and_plain_text_is_kept() -> None:
    content = "<a>\n</parameter>\n<b>\n</parameter>x"
    text = f"</think><tool_call>\n<function=Write>\n<parameter=file_path>\nx\n</parameter>\n<parameter=content>\n{content}\n</parameter>\n</function>\n</tool_call>"
    assert calls(parse(text)) == [("Write", {"file_path": "x", "content": content})]


# 4. Python literals for array and object parameters -------------------------------------


def test_python_literals_for_array_and_object() -> None:
    text = "</think><tool_call>\n<function=Tag>\n<parameter=names>\n['a', 'b']\n</parameter>\n<parameter=meta>\n{'k': None, 'n': (1)}\n</parameter>\n</function>\n</tool_call>"
    reply = parse(text)
    assert calls(reply) == [("Tag", {"names": ["a", "b"], "meta": {"k": None, "n": 1}})]
    assert reply.recoveries == [Drift.PYTHON_LITERAL] * 2


def test_python_literal_of_another_shape_is_not_taken() -> None:
    text = "</think><tool_call>\n<function=Tag>\n<parameter=names>\n('a', b'x')\n</parameter>\n</function>\n</tool_call>"
    reply = parse(text)
    assert calls(reply) == [("Tag", {"names": "('a', b'x')"})]
    assert parse(text, strict=True).errors[0].error.count("must be a JSON array") == 1


# 5. Missing </function> before </tool_call> ----------------------------------------------


def test_missing_function_close() -> None:
    text = "</think><tool_call>\n<function=Bash>\n<parameter=command>\nls\n</parameter>\n</tool_call>\nok"
    reply = parse(text)
    assert calls(reply) == [("Bash", {"command": "ls"})]
    assert reply.recoveries == [Drift.FUNCTION_CLOSE_MISSING]
    assert reply.content == "ok"


# 6. A <tool_call> inside <think> ---------------------------------------------------------


def test_tool_call_inside_reasoning_stays_reasoning_when_think_closes_later() -> None:
    inner = "<tool_call>\n<function=Bash>\n<parameter=command>\nrm -rf x\n</parameter>\n</function>\n</tool_call>"
    text = f"Maybe {inner} no, better not.\n</think>\n\nI will not delete it."
    reply = parse(text)
    assert reply.tool_calls == [] and reply.errors == []
    assert reply.reasoning == f"Maybe {inner} no, better not."
    assert reply.content == "I will not delete it."
    assert reply.recoveries == [Drift.CALL_IN_REASONING]


def test_positive_control_call_after_unclosed_reasoning_runs() -> None:
    text = "Let me look.\n<tool_call>\n<function=Bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>"
    reply = parse(text)
    assert reply.reasoning == "Let me look."
    assert calls(reply) == [("Bash", {"command": "ls"})]
    assert reply.recoveries == [Drift.THINK_CLOSE_MISSING]


# 7. <function=NAME without > before the newline ------------------------------------------


def test_function_tag_without_closing_bracket_reads_the_name_to_the_line_end() -> None:
    text = "</think><tool_call>\n<function=Bash\n<parameter=command>\necho a > b\n</parameter>\n</function>\n</tool_call>"
    reply = parse(text)
    assert calls(reply) == [("Bash", {"command": "echo a > b"})]
    assert reply.recoveries == [Drift.TAG_UNCLOSED]


def test_unknown_function_tag_without_closing_bracket_is_an_error_both_ways() -> None:
    text = "</think><tool_call>\n<function=Nope\n<parameter=command>\necho a > b\n</parameter>\n</function>\n</tool_call>"
    reply = parse(text)
    assert reply.tool_calls == []
    assert "is not closed with '>'" in reply.errors[0].error


# The common path ------------------------------------------------------------------------


def test_exact_calls_record_no_recovery() -> None:
    text = "</think><tool_call>\n<function=Bash>\n<parameter=command>\nls\n</parameter>\n<parameter=timeout>\n5\n</parameter>\n</function>\n</tool_call>"
    reply = parse(text)
    assert reply.tool_calls == [ToolCall("Bash", {"command": "ls", "timeout": 5}, id="call_0")]
    assert reply.recoveries == []
