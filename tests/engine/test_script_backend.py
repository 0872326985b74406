"""The script backend: replaying recorded raw replies through the real parser."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from frogdesk.engine.chat import (
    Backend,
    ContentDelta,
    Decoded,
    EngineEvent,
    Finished,
    GenerationSettings,
    Message,
    ReasoningDelta,
    Reply,
    ToolCall,
    ToolSchema,
    Usage,
)
from frogdesk.engine.errors import ScriptError
from frogdesk.engine.script_backend import ScriptBackend
from frogdesk.engine.toolcall.parser import render_tool_call_xml

BASH: ToolSchema = {
    "type": "function",
    "function": {
        "name": "Bash",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}},
            "required": ["command"],
        },
    },
}
MESSAGES = [Message("system", "sys"), Message("user", "do it")]


def write_script(path: Path, *lines: object) -> Path:
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n",
        encoding="utf-8",
    )
    return path


def collect(events: list[EngineEvent]) -> Reply:
    reply = Reply()
    for event in events:
        reply.add(event)
    return reply


def test_replays_replies_in_order_through_the_parser(tmp_path: Path) -> None:
    call = render_tool_call_xml(ToolCall("Bash", {"command": "ls\n-la", "timeout": 5}))
    script = write_script(
        tmp_path / "s.jsonl",
        {"text": "Look around.\n</think>\n\nListing.\n" + call},
        "",
        {"text": "Done.\n</think>\n\nAll fixed."},
    )
    backend: Backend = ScriptBackend(script, chunk_chars=3)
    first = list(backend.generate(MESSAGES, [BASH], GenerationSettings()))
    reply = collect(first)
    assert reply.reasoning == "Look around."
    assert reply.content == "Listing."
    assert reply.tool_calls == [
        ToolCall("Bash", {"command": "ls\n-la", "timeout": 5}, id="call_1_0")
    ]
    assert reply.finish == Finished(
        "tool_calls", raw_text="Look around.\n</think>\n\nListing.\n" + call
    )
    assert isinstance(reply.usage, Usage) and reply.usage.completion_tokens > 0
    assert (
        sum(isinstance(e, ReasoningDelta | ContentDelta) for e in first) > 2
    )  # streamed in pieces
    second = collect(list(backend.generate(MESSAGES, [BASH], GenerationSettings())))
    assert (second.content, second.finish) == (
        "All fixed.",
        Finished("stop", raw_text="Done.\n</think>\n\nAll fixed."),
    )
    assert backend.info.kind == "script" and backend.info.model == str(script)


def test_running_out_of_replies_is_a_clear_error(tmp_path: Path) -> None:
    backend = ScriptBackend(write_script(tmp_path / "s.jsonl", {"text": "</think>ok"}))
    list(backend.generate(MESSAGES, [], GenerationSettings()))
    assert backend.replies_left == 0
    events = list(backend.generate(MESSAGES, [], GenerationSettings()))
    assert len(events) == 1 and isinstance(events[0], Finished)
    assert events[0].reason == "error"
    assert "no reply left" in events[0].error and "holds 1 replies" in events[0].error


def test_error_line_fails_that_turn(tmp_path: Path) -> None:
    backend = ScriptBackend(write_script(tmp_path / "s.jsonl", {"error": "server melted"}))
    events = list(backend.generate(MESSAGES, [], GenerationSettings()))
    assert events == [Finished("error", error=f"{tmp_path / 's.jsonl'} line 1: server melted")]


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("{not json", "line 2: not valid JSON"),
        ('["text"]', 'line 2: expected an object with a string "text"'),
        ('{"text": 3}', 'line 2: expected an object with a string "text"'),
    ],
)
def test_malformed_line_names_its_number(tmp_path: Path, line: str, needle: str) -> None:
    script = write_script(tmp_path / "s.jsonl", {"text": "fine"}, line)
    with pytest.raises(ScriptError, match=needle):
        ScriptBackend(script)


def test_missing_script_file(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match="does not exist"):
        ScriptBackend(tmp_path / "nope.jsonl")


def test_non_utf8_script(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"text": "\xff"}\n')
    with pytest.raises(ScriptError, match="cannot read"):
        ScriptBackend(path)


def test_cancel_from_another_thread_stops_the_stream(tmp_path: Path) -> None:
    backend = ScriptBackend(write_script(tmp_path / "s.jsonl", {"text": "x" * 400}), chunk_chars=4)
    cancel = threading.Event()
    events: list[EngineEvent] = []
    for event in backend.generate(MESSAGES, [], GenerationSettings(), cancel):
        events.append(event)
        if isinstance(event, Decoded) and event.tokens == 2:  # after the second chunk
            setter = threading.Thread(target=cancel.set)
            setter.start()
            setter.join()
    final = events[-1]
    assert isinstance(final, Finished) and final.reason == "cancelled"
    assert len(final.raw_text) < 400
    assert sum(isinstance(e, ReasoningDelta) for e in events) == 2


def test_reply_over_the_turn_budget_finishes_with_length(tmp_path: Path) -> None:
    call = render_tool_call_xml(ToolCall("Bash", {"command": "echo " + "y" * 200}))
    backend = ScriptBackend(write_script(tmp_path / "s.jsonl", {"text": "</think>" + call}))
    reply = collect(list(backend.generate(MESSAGES, [BASH], GenerationSettings(max_tokens=20))))
    assert reply.finish is not None and reply.finish.reason == "length"
    assert len(reply.finish.raw_text) == 80
    assert reply.tool_calls == []
    assert "reply ended" in reply.errors[0].error


def test_prompt_over_the_context_budget(tmp_path: Path) -> None:
    backend = ScriptBackend(write_script(tmp_path / "s.jsonl", {"text": "</think>ok"}))
    big = [Message("user", "z" * 4000)]
    events = list(backend.generate(big, [], GenerationSettings(max_context=500)))
    assert len(events) == 1 and isinstance(events[0], Finished)
    assert events[0].reason == "max_context_len"
    assert backend.replies_left == 1  # the reply was not used up
    assert backend.count_tokens(big, []) >= 1000


def test_thinking_disabled_reads_content_from_the_start(tmp_path: Path) -> None:
    backend = ScriptBackend(write_script(tmp_path / "s.jsonl", {"text": "Plain answer."}))
    reply = collect(list(backend.generate(MESSAGES, [], GenerationSettings(enable_thinking=False))))
    assert (reply.reasoning, reply.content) == ("", "Plain answer.")


def test_malformed_call_is_reported_not_raised(tmp_path: Path) -> None:
    text = "</think><tool_call>\n<function=Bash>\n<parameter=timeout>\nsoon\n</parameter>\n</function>\n</tool_call>"
    backend = ScriptBackend(write_script(tmp_path / "s.jsonl", {"text": text}), strict_calls=True)
    reply = collect(list(backend.generate(MESSAGES, [BASH], GenerationSettings())))
    assert reply.tool_calls == []
    assert len(reply.errors) == 1
    assert "must be a number" in reply.errors[0].error
    assert "missing required parameter 'command'" in reply.errors[0].error
    assert reply.finish is not None and reply.finish.reason == "tool_calls"


def test_lenient_script_backend(tmp_path: Path) -> None:
    text = "</think>" + render_tool_call_xml(ToolCall("Bash", {"cmd": "ls"}))
    backend = ScriptBackend(write_script(tmp_path / "s.jsonl", {"text": text}), strict_calls=False)
    reply = collect(list(backend.generate(MESSAGES, [BASH], GenerationSettings())))
    assert [c.arguments for c in reply.tool_calls] == [{"cmd": "ls"}]
