"""Values past Python's own limits (4,300-digit integers, deep nesting) are bad calls, never crashes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from frogdesk.engine.chat import EngineEvent, Message, ToolCallError, ToolCallEvent, ToolSchema
from frogdesk.engine.openai.errors import StreamError
from frogdesk.engine.openai.stream import ChunkAssembler
from frogdesk.engine.script_backend import ScriptBackend
from frogdesk.engine.toolcall.parser import parse_reply
from frogdesk.leaf.loop import LoopConfig, run_loop
from frogdesk.leaf.runner import ToolRunner
from frogdesk.leaf.schemas import SYSTEM_PROMPT, tool_schemas

LIMIT = sys.get_int_max_str_digits()
HUGE = "9" * (LIMIT + 700)
"""An integer literal int() refuses with a plain ValueError."""
DEEP = "[" * 100_000 + "]" * 100_000
"""An array json.loads refuses with RecursionError."""

PROBE: ToolSchema = {
    "type": "function",
    "function": {
        "name": "Probe",
        "parameters": {
            "type": "object",
            "properties": {
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "items": {"type": "array"},
                "loose": {},
            },
        },
    },
}


def xml_call(name: str, params: dict[str, str]) -> str:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    return f"x\n</think>\n<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


def only(events: list[EngineEvent]) -> ToolCallEvent | ToolCallError:
    calls = [e for e in events if isinstance(e, ToolCallEvent | ToolCallError)]
    assert len(calls) == 1, events
    return calls[0]


@pytest.mark.parametrize(("key", "noun"), [("count", "an integer"), ("ratio", "a number")])
def test_xml_integer_over_the_digit_limit_is_a_bad_value(key: str, noun: str) -> None:
    strict = only(parse_reply(xml_call("Probe", {key: HUGE}), [PROBE], strict=True))
    assert isinstance(strict, ToolCallError)
    assert strict.error == (
        f"Invalid tool call to 'Probe': parameter '{key}' must be {noun} of at most "
        f"{LIMIT:,} digits, got {len(HUGE):,} digits."
    )
    # Lenient (Leaf's way): the text goes to the tool, which reports what it cannot use.
    lenient = only(parse_reply(xml_call("Probe", {key: HUGE}), [PROBE]))
    assert isinstance(lenient, ToolCallEvent) and lenient.call.arguments == {key: HUGE}
    # Control: the same call with an integer at the limit is read as an int.
    at_limit = "9" * LIMIT
    fine = only(parse_reply(xml_call("Probe", {key: at_limit}), [PROBE], strict=True))
    assert isinstance(fine, ToolCallEvent) and fine.call.arguments == {key: int(at_limit)}


def test_xml_deep_nesting_and_huge_numbers_in_json_values() -> None:
    strict = only(parse_reply(xml_call("Probe", {"items": DEEP}), [PROBE], strict=True))
    assert isinstance(strict, ToolCallError)
    assert "parameter 'items' must be a JSON array, but it is not valid JSON" in strict.error
    big = only(parse_reply(xml_call("Probe", {"items": f"[{HUGE}]"}), [PROBE], strict=True))
    assert isinstance(big, ToolCallError) and "has over" in big.error
    # Untyped values fall back to their text, as for any text that is not JSON.
    for raw in (DEEP, HUGE):
        loose = only(parse_reply(xml_call("Probe", {"loose": raw}), [PROBE], strict=True))
        assert isinstance(loose, ToolCallEvent) and loose.call.arguments == {"loose": raw}
    # Control: ordinary JSON in the same parameters is parsed.
    good = only(
        parse_reply(xml_call("Probe", {"items": "[[1], 2]", "loose": "[3]"}), [PROBE], strict=True)
    )
    assert isinstance(good, ToolCallEvent)
    assert good.call.arguments == {"items": [[1], 2], "loose": [3]}


def test_the_loop_goes_on_after_a_huge_read_offset(tmp_path: Path) -> None:
    """It ended the session with llm_query_error; now the tool says what Leaf's would."""
    (tmp_path / "a.py").write_text("one\n")
    replies = [
        xml_call("Read", {"file_path": "a.py", "offset": HUGE}),
        xml_call("Read", {"file_path": "a.py", "offset": "1"}),
        "done\n</think>\nok",
    ]
    script = tmp_path / "s.jsonl"
    script.write_text("".join(json.dumps({"text": r}) + "\n" for r in replies))
    messages = [Message("system", SYSTEM_PROMPT), Message("user", "go")]
    result = run_loop(
        ScriptBackend(script), tool_schemas(), ToolRunner(tmp_path, None), LoopConfig(), messages
    )
    assert result.exit_reason == "agent", result.error
    observations = [o.observation for s in result.steps for o in s.observations]
    assert observations[0].startswith("ValueError: Exceeds the limit")
    assert observations[1] == "a.py\n1. one"


def structured(arguments: str, *, strict: bool) -> list[EngineEvent]:
    assembler = ChunkAssembler(tool_schemas(), thinking=False, strict=strict)
    call = {"index": 0, "id": "c1", "function": {"name": "Read", "arguments": arguments}}
    delta: dict[str, Any] = {"tool_calls": [call]}
    assembler.add(json.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}))
    events = assembler.finish()
    assembler.raw_text()  # the transcript's rebuild of the reply must not raise either
    return events


@pytest.mark.parametrize(
    ("arguments", "why"),
    [
        ('{"file_path": "a.py", "offset": ' + HUGE + "}", f"a number has over {LIMIT:,} digits"),
        ('{"file_path": "a.py", "x": ' + DEEP + "}", "it is nested too deeply"),
        ('{"file_path": ', "Expecting value"),  # the malformed JSON these now match
    ],
)
def test_openai_arguments_json_cannot_read_are_like_malformed_json(
    arguments: str, why: str
) -> None:
    strict = only(structured(arguments, strict=True))
    assert isinstance(strict, ToolCallError)
    assert strict.error == f"Invalid tool call to 'Read': the arguments are not valid JSON ({why})."
    lenient = only(structured(arguments, strict=False))
    assert isinstance(lenient, ToolCallEvent) and lenient.call.arguments == {}
    # Control: the same call shape with readable arguments.
    fine = only(structured('{"file_path": "a.py", "offset": 12}', strict=True))
    assert isinstance(fine, ToolCallEvent)
    assert fine.call.arguments == {"file_path": "a.py", "offset": 12}


@pytest.mark.parametrize("payload", ['{"choices": [], "n": ' + HUGE + "}", DEEP])
def test_a_chunk_json_cannot_read_is_a_stream_error(payload: str) -> None:
    assembler = ChunkAssembler(tool_schemas(), thinking=False)
    with pytest.raises(StreamError, match="not JSON"):
        assembler.add(payload)
    assert assembler.add('{"choices": [], "n": 1}') == []  # control


def test_an_endpoint_error_body_nested_past_the_limit_is_shown_as_text() -> None:
    """An HTTP error's body is shown in one line whatever its JSON; the control: a real
    error object gives its message."""
    from frogdesk.engine.openai.backend import _server_message

    nested = b"[" * 4000
    assert _server_message(nested) == nested.decode()[:500]
    assert _server_message(b'{"error": {"message": "model not found"}}') == "model not found"
