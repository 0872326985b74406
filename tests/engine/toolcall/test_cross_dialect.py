"""Issue 30.3 / invariant 12: a reply in the other dialect's form is read and counted, or answered
with an error naming both forms; never the silent final answer. Whole and split alike."""

from __future__ import annotations

from typing import Any

import pytest

from frogdesk.engine.chat import ContentDelta, EngineEvent, ToolCallError, ToolCallEvent
from frogdesk.engine.toolcall.dialect import HERMES, XML, ToolCallDialect
from frogdesk.leaf.schemas import tool_schemas

TOOLS = tool_schemas()
XML_CALL = "<tool_call>\n<function=Read>\n<parameter=file_path>\ncalc.py\n</parameter>\n</function>\n</tool_call>"
BARE_XML = (
    "Let me look.\n<function=Read>\n<parameter=file_path>\ncalc.py\n</parameter>\n</function>"
)
HERMES_CALL = '<tool_call>\n{"name": "Read", "arguments": {"file_path": "calc.py"}}\n</tool_call>'
FENCED = 'I will read.\n```json\n{"name": "Read", "arguments": {"file_path": "calc.py"}}\n```'
BARE_JSON = '{"name": "Read", "arguments": {"file_path": "calc.py"}}'
BROKEN_HERMES = '<tool_call>\n{"name": "Read", "arguments": {"file_path": "calc.py"\n</tool_call>'
PROSE = "The bug is in add(): it subtracts. Use {braces} and <b>tags</b> freely."
READ = ("Read", {"file_path": "calc.py"})

CASES: list[tuple[ToolCallDialect, str, list[Any], tuple[str, ...], str]] = [
    # The model's own form: as before, no drift added.
    (XML, XML_CALL, [READ], (), ""),
    (HERMES, HERMES_CALL, [READ], (), ""),
    (HERMES, FENCED, [READ], ("fenced_json",), ""),
    # The other dialect's form: read and counted.
    (XML, HERMES_CALL, [READ], ("other_dialect_hermes_json",), ""),
    (XML, FENCED, [READ], ("other_dialect_hermes_json", "fenced_json"), ""),
    (XML, BARE_JSON, [READ], ("other_dialect_hermes_json", "bare_json"), ""),
    (HERMES, XML_CALL, [READ], ("other_dialect_qwen3_coder_xml",), ""),
    (HERMES, BARE_XML, [READ], ("other_dialect_qwen3_coder_xml", "bare_function"), ""),
    # Looks like a call in the other form but does not read: the model hears both forms.
    (
        XML,
        BROKEN_HERMES,
        [],
        (),
        "looked like a tool call in Hermes JSON in <tool_call> but not in this model's dialect "
        "(Qwen3-Coder XML in <tool_call>)",
    ),
    # Prose stays the final answer.
    (XML, PROSE, [], (), ""),
    (HERMES, PROSE, [], (), ""),
]


def _events(dialect: ToolCallDialect, pieces: list[str]) -> list[EngineEvent]:
    parser = dialect.parser(TOOLS, starts_in_reasoning=False)
    events = [e for piece in pieces for e in parser.feed(piece)]
    return events + parser.finish()


def _summary(events: list[EngineEvent]) -> tuple[list[Any], list[tuple[str, ...]], list[str]]:
    calls = [(e.call.name, e.call.arguments) for e in events if isinstance(e, ToolCallEvent)]
    drifts = [e.recovered for e in events if isinstance(e, ToolCallEvent)]
    errors = [e.error for e in events if isinstance(e, ToolCallError)]
    return calls, drifts, errors


@pytest.mark.parametrize(("dialect", "text", "calls", "drift", "error"), CASES)
def test_whole_one_char_at_a_time_and_split_anywhere_agree(
    dialect: ToolCallDialect, text: str, calls: list[Any], drift: tuple[str, ...], error: str
) -> None:
    whole = _summary(_events(dialect, [text]))
    assert whole[0] == calls
    assert whole[1] == ([drift] if calls else [])
    if error:
        assert len(whole[2]) == 1 and error in whole[2][0]
    else:
        assert whole[2] == []
    if not calls and not error:
        content = "".join(e.text for e in _events(dialect, [text]) if isinstance(e, ContentDelta))
        assert content == text
    assert _summary(_events(dialect, list(text))) == whole
    for cut in range(1, len(text)):
        assert _summary(_events(dialect, [text[:cut], text[cut:]])) == whole, cut


def test_a_call_in_the_own_form_leaves_the_other_form_alone() -> None:
    # Once the model's own parser found a call, a JSON example after it is text, as before.
    text = XML_CALL + "\n" + FENCED
    calls, drifts, errors = _summary(_events(XML, [text]))
    assert calls == [READ] and drifts == [()] and errors == []


def test_the_own_error_stands_where_the_other_form_does_not_read_whole() -> None:
    text = "<tool_call>\n<function=Read>\n<parameter=file_path>\ncalc.py\n</tool_call>"
    own = XML.parser(TOOLS, starts_in_reasoning=False)
    # The XML parser's own reading decides (a call or its own error), never a silent answer.
    events = own.feed(text) + own.finish()
    assert any(isinstance(e, ToolCallEvent | ToolCallError) for e in events)
    assert not any(
        isinstance(e, ToolCallError) and "looked like a tool call" in e.error for e in events
    )
