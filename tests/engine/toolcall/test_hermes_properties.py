"""Property: a Hermes reply parses to the same result whole, one character at a time, or split anywhere.

The generated replies mix exact calls, every recovered drift (fences, wrapper tags, bare
objects, arguments as a string, a missing `</tool_call>`), broken and cut objects, JSON that
is no call, strings holding tags, braces and escapes, and reasoning with and without
`</think>`. Calls rendered the way the template writes them parse back to themselves.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frogdesk.engine.chat import EngineEvent, Reply, ToolCall, ToolSchema
from frogdesk.engine.toolcall.hermes import HermesToolParser, render_tool_call_hermes

PROPERTIES: dict[str, dict[str, Any]] = {
    "path": {"type": "string"},
    "count": {"type": "integer"},
    "items": {"type": "array"},
    "flag": {"type": "boolean"},
}
TOOLS: list[ToolSchema] = [
    {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": PROPERTIES}},
    }
    for name in ("Alpha", "Beta")
]

PIECES = [
    "a",
    "é",
    "🐸",
    "{",
    "}",
    "[",
    "]",
    "`",
    "```",
    "<tool_call>",
    "</tool_call>",
    "</think>",
    "<think>",
    "<tool>",
    "\\u00e9",
    "\\n",
]
tricky = st.lists(
    st.sampled_from([*PIECES, " ", "\n", '"', "\\"]),
    max_size=6,
).map("".join)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 99), st.text(max_size=4), tricky),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(list(PROPERTIES)), inner)
    ),
    max_leaves=6,
)


@st.composite
def call_objects(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(["Alpha", "Beta", "Gamma"]))
    arguments = draw(st.dictionaries(st.sampled_from(list(PROPERTIES)), json_values, max_size=3))
    args_text = json.dumps(arguments, ensure_ascii=draw(st.booleans()))
    if draw(st.integers(0, 5)) == 0:
        args_text = json.dumps(args_text)  # arguments given as a JSON string
    body = f'{{"name": {json.dumps(name)}, "arguments": {args_text}}}'
    damage = draw(st.integers(0, 9))
    if damage == 0:
        body = body[: draw(st.integers(0, len(body)))]  # cut
    elif damage == 1:
        body = body.replace('"arguments"', '"args"')
    return body


@st.composite
def calls(draw: st.DrawFn) -> str:
    body = draw(call_objects())
    wrapper = draw(st.sampled_from(["tool_call", "tool_call", "open", "fence", "tag", "bare"]))
    if wrapper == "tool_call":
        return f"<tool_call>\n{body}\n</tool_call>"
    if wrapper == "open":
        return f"<tool_call>\n{body}"
    if wrapper == "fence":
        lang = draw(st.sampled_from(["json", "", "xml"]))
        return f"```{lang}\n{body}\n```"
    if wrapper == "tag":
        tag = draw(st.sampled_from(["tool", "response", "json"]))
        return f"<{tag}>\n{body}\n</{tag}>"
    return body


@st.composite
def replies(draw: st.DrawFn) -> str:
    parts = [draw(tricky)]
    if draw(st.booleans()):
        parts.append(draw(calls()))  # a call inside the reasoning
    if draw(st.booleans()):
        parts.append("\n</think>\n\n")
    for _ in range(draw(st.integers(0, 3))):
        sep = draw(st.sampled_from(["", "\n", " "]))
        parts.append(sep + draw(st.one_of(tricky, calls())))
    return "".join(parts)


def outcome(chunks: list[str], *, strict: bool, reasoning: bool) -> tuple[Any, ...]:
    parser = HermesToolParser(TOOLS, strict=strict, starts_in_reasoning=reasoning)
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
    assert outcome(chunks, strict=False, reasoning=False) == outcome(
        [text], strict=False, reasoning=False
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    names=st.lists(st.sampled_from(["Alpha", "Beta"]), min_size=1, max_size=3),
    data=st.data(),
    prose=tricky,
)
def test_rendered_calls_parse_back_to_themselves(
    names: list[str], data: st.DataObject, prose: str
) -> None:
    made = [
        ToolCall(
            name,
            data.draw(st.dictionaries(st.sampled_from(list(PROPERTIES)), json_values, max_size=3)),
            id=f"call_{i}",
        )
        for i, name in enumerate(names)
    ]
    text = "\n".join(render_tool_call_hermes(call) for call in made)
    # Prose on a line of its own before the calls, as the template puts content first
    # (without `<think>`, which would open reasoning at the reply's start).
    reply = outcome(
        [prose.replace("<tool_call>", "").replace("<think>", "") + "\n" + text],
        strict=True,
        reasoning=False,
    )
    assert reply[2][-len(made) :] == made
    assert outcome(list(text), strict=True, reasoning=False)[2] == made
