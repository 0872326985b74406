"""Property tests: render random calls, split the text into random chunks, parse the same calls back."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frogdesk.engine.chat import EngineEvent, Message, Reply, ToolCall, ToolSchema
from frogdesk.engine.template import ChatTemplate, load_gguf_template
from frogdesk.engine.toolcall.parser import QwenXmlToolParser, render_tool_call_xml

PROPERTIES: dict[str, dict[str, Any]] = {
    "path": {"type": "string"},
    "text": {"type": "string"},
    "count": {"type": "integer"},
    "ratio": {"type": "number"},
    "flag": {"type": "boolean"},
    "items": {"type": "array"},
    "options": {"type": "object"},
    "maybe": {"type": ["integer", "null"]},
}
TOOLS: list[ToolSchema] = [
    {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": PROPERTIES}},
    }
    for name in ("Alpha", "Beta_2", "gamma-tool")
]

# The one string the format cannot carry: `</parameter>` followed by optional whitespace
# and `<parameter=`, `</function>` or `</tool_call>` (the parser must end the value there).
UNCARRIABLE = re.compile(r"</parameter>\s*(<parameter=|</function>|</tool_call>)")

tricky_text = st.lists(
    st.sampled_from(
        [
            "a",
            "Z",
            " ",
            "\n",
            "\t",
            "<",
            ">",
            "/",
            "=",
            "é",
            "\r",
            "</parameter>",
            "</parameter",
            "<parameter=",
            "</function>",
            "<function=",
            "</tool_call>",
            "<tool_call>",
            "</think>",
            "<think>",
            "\n</parameter>\n",
        ]
    ),
    max_size=30,
).map("".join)
carried_text = tricky_text.filter(lambda s: not UNCARRIABLE.search(s))

json_scalars = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=5)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)

VALUES: dict[str, st.SearchStrategy[Any]] = {
    "path": carried_text,
    "text": carried_text,
    "count": st.integers(-(10**12), 10**12),
    "ratio": st.floats(allow_nan=False, allow_infinity=False, width=64),
    "flag": st.booleans(),
    "items": st.lists(json_values, max_size=4),
    "options": st.dictionaries(st.text(max_size=6), json_values, max_size=4),
    "maybe": st.none() | st.integers(-100, 100),
}


@st.composite
def tool_calls(draw: st.DrawFn) -> ToolCall:
    name = draw(st.sampled_from(["Alpha", "Beta_2", "gamma-tool"]))
    keys = draw(st.lists(st.sampled_from(list(PROPERTIES)), unique=True, max_size=len(PROPERTIES)))
    return ToolCall(name, {key: draw(VALUES[key]) for key in keys})


plain_text = tricky_text.filter(
    lambda s: not any(tag in s for tag in ("<think>", "</think>", "<tool_call>"))
)


@st.composite
def chunked(draw: st.DrawFn, text: str) -> list[str]:
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def run(chunks: list[str], *, starts_in_reasoning: bool = True) -> Reply:
    parser = QwenXmlToolParser(TOOLS, starts_in_reasoning=starts_in_reasoning)
    events: list[EngineEvent] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.finish())
    reply = Reply()
    for event in events:
        reply.add(event)
    return reply


def same(a: Any, b: Any) -> bool:
    """Equal, and with the same JSON types (True is not 1)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    reasoning=plain_text,
    content=plain_text,
    calls=st.lists(tool_calls(), max_size=3),
)
def test_reply_round_trips_through_random_chunks(
    data: st.DataObject, reasoning: str, content: str, calls: list[ToolCall]
) -> None:
    text = (
        reasoning + "\n</think>\n\n" + content + "\n" + "\n".join(map(render_tool_call_xml, calls))
    )
    reply = run(data.draw(chunked(text)))
    assert reply.errors == []
    assert reply.reasoning == reasoning.strip()
    assert reply.content == content.strip()
    assert [c.name for c in reply.tool_calls] == [c.name for c in calls]
    for got, want in zip(reply.tool_calls, calls, strict=True):
        assert same(got.arguments, want.arguments), (got.arguments, want.arguments)
    assert [c.id for c in reply.tool_calls] == [f"call_{i}" for i in range(len(calls))]


@settings(max_examples=200, deadline=None)
@given(data=st.data(), text=tricky_text)
def test_any_text_never_raises_and_keeps_text_outside_calls(data: st.DataObject, text: str) -> None:
    reply = run(data.draw(chunked(text)), starts_in_reasoning=data.draw(st.booleans()))
    if "<tool_call>" not in text and "<think>" not in text and "</think>" not in text:
        assert reply.reasoning + reply.content == text.strip()


@settings(max_examples=100, deadline=None)
@given(
    data=st.data(),
    value=st.tuples(
        tricky_text,
        st.sampled_from(["", "\n", " \t\n"]),
        st.sampled_from(["<parameter=", "</function>", "</tool_call>"]),
        tricky_text,
    ).map(lambda parts: parts[0] + "</parameter>" + "".join(parts[1:])),
)
def test_uncarriable_value_is_an_error_or_a_different_value_never_a_crash(
    data: st.DataObject, value: str
) -> None:
    text = "</think>" + render_tool_call_xml(ToolCall("Alpha", {"text": value}))
    reply = run(data.draw(chunked(text)))
    assert all(c.arguments.get("text") != value for c in reply.tool_calls)


@pytest.fixture(scope="module")
def qwen35_template(qwen35_gguf: Path) -> ChatTemplate:
    """The Qwen3.5-style template embedded in the tiny qwen35 GGUF."""
    return load_gguf_template(qwen35_gguf)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    reasoning=plain_text,
    content=plain_text,
    calls=st.lists(tool_calls(), min_size=1, max_size=3),
)
def test_calls_rendered_by_the_chat_template_parse_back(
    qwen35_template: ChatTemplate,
    data: st.DataObject,
    reasoning: str,
    content: str,
    calls: list[ToolCall],
) -> None:
    history = [Message("user", "task")]
    turn = Message("assistant", content, reasoning=reasoning, tool_calls=tuple(calls))
    prompt = qwen35_template.render(history, TOOLS, add_generation_prompt=True)
    full = qwen35_template.render([*history, turn], TOOLS, add_generation_prompt=False)
    assert full.startswith(prompt) and full.endswith("<|im_end|>\n")
    generated = full[len(prompt) : -len("<|im_end|>\n")]
    reply = run(data.draw(chunked(generated)))
    assert reply.errors == []
    assert reply.reasoning == reasoning.strip()
    assert reply.content == content.strip()
    assert len(reply.tool_calls) == len(calls)
    for got, want in zip(reply.tool_calls, calls, strict=True):
        assert got.name == want.name
        assert same(got.arguments, want.arguments), (got.arguments, want.arguments)
