"""Property: a reply parses to the same result whole, one character at a time, or split anywhere.

The generated replies mix exact calls, every recovered drift, values holding tag-like text,
unicode and empty values, reasoning with and without `</think>`, and plain content.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frogdesk.engine.chat import EngineEvent, Reply, ToolSchema
from frogdesk.engine.toolcall.parser import QwenXmlToolParser
from frogdesk.engine.toolcall.scan import read_call, read_exact_call
from frogdesk.engine.toolcall.values import tool_specs

PROPERTIES: dict[str, dict[str, Any]] = {
    "path": {"type": "string"},
    "text": {"type": "string"},
    "count": {"type": "integer"},
    "items": {"type": "array"},
    "options": {"type": "object"},
}
TOOLS: list[ToolSchema] = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": PROPERTIES, "required": ["path"]},
        },
    }
    for name in ("Alpha", "Beta")
]

pieces = st.sampled_from(
    [
        "a",
        "é",
        "中",
        "🐸",
        " ",
        "\n",
        "<",
        ">",
        "</parameter>",
        "</parameter",
        "<parameter=",
        "<parameter=path>",
        "<parameter=zzz>",
        "</function>",
        "<function=",
        "<function=Alpha>",
        "</tool_call>",
        "<tool_call>",
        "</think>",
        "<think>",
    ]
)
tag_text = st.lists(pieces, max_size=8).map("".join)
values: st.SearchStrategy[str] = st.one_of(
    st.just(""),
    st.text(max_size=6),
    tag_text,
    st.sampled_from(["['a', 'b']", "{'k': 1}", "[1, 2]", '{"k": null}', "12", "x"]),
)

PARAM_ENDS = [
    "\n</parameter>\n",  # exact
    "\n</parameter1>\n",
    "\n</parameter_function>\n",
    "\n</parameter\n",
    "\n",  # missing
]


@st.composite
def call_texts(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(["Alpha", "Beta", "Gamma"]))
    keys = draw(st.lists(st.sampled_from(list(PROPERTIES)), unique=True, max_size=3))
    params = "".join(
        f"<parameter={key}>\n{draw(values)}{draw(st.sampled_from(PARAM_ENDS))}" for key in keys
    )
    head = draw(st.sampled_from([f"<function={name}>\n", f"<function={name}\n"]))
    close = draw(st.sampled_from(["</function>\n", ""]))
    wrapper = draw(st.sampled_from(["wrapped", "wrapped", "bare", "bare_closed"]))
    if wrapper == "bare":
        return head + params + "</function>"
    if wrapper == "bare_closed":
        return head + params + "</function>\n</tool_call>"
    return "<tool_call>\n" + head + params + close + "</tool_call>"


@st.composite
def replies(draw: st.DrawFn) -> str:
    parts = [draw(tag_text)]
    if draw(st.booleans()):
        parts.append(draw(call_texts()))  # a call inside the reasoning
        parts.append(draw(tag_text))
    if draw(st.booleans()):
        parts.append("\n</think>\n\n")
    for _ in range(draw(st.integers(0, 3))):
        parts.append(draw(st.one_of(tag_text, call_texts())))
    return "".join(parts)


def outcome(chunks: list[str], *, strict: bool, reasoning: bool) -> tuple[Any, ...]:
    parser = QwenXmlToolParser(TOOLS, strict=strict, starts_in_reasoning=reasoning)
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
        reply.tool_calls,
        [(e.name, e.error, e.raw) for e in reply.errors],
        reply.recoveries,
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=replies(), strict=st.booleans(), reasoning=st.booleans())
def test_whole_and_streamed_agree_at_every_split(text: str, strict: bool, reasoning: bool) -> None:
    whole = outcome([text], strict=strict, reasoning=reasoning)
    assert outcome(list(text), strict=strict, reasoning=reasoning) == whole
    for cut in range(1, len(text)):
        assert outcome([text[:cut], text[cut:]], strict=strict, reasoning=reasoning) == whole, cut


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=replies(), data=st.data())
def test_whole_and_streamed_agree_for_random_chunkings(text: str, data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=20)))
    bounds = [0, *cuts, len(text)]
    chunks = [text[a:b] for a, b in itertools.pairwise(bounds)]
    assert outcome(chunks, strict=False, reasoning=True) == outcome(
        [text], strict=False, reasoning=True
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(call=call_texts())
def test_the_fast_exact_reading_agrees_with_the_full_reader(call: str) -> None:
    specs = tool_specs(TOOLS)
    body = call.removeprefix("<tool_call>\n").removesuffix("</tool_call>")
    fast = read_exact_call(body, specs)
    full = read_call(body, specs, closed=True, recover=False)
    if fast is not None:
        assert (fast.state, fast.name, fast.params) == (full.state, full.name, full.params)
        recovering = read_call(body, specs, closed=True, recover=True)
        assert not full.ambiguity and recovering.params == full.params
