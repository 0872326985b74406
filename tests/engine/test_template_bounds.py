"""A chat template is code from a model file: it cannot hang FrogDesk nor flood its memory."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from frogdesk.engine.chat import Message, ToolCall, ToolSchema
from frogdesk.engine.errors import TemplateError
from frogdesk.engine.template import ChatTemplate
from tests.support.tiny_chat_template import CHAT_TEMPLATE

MESSAGES = [Message("user", "hi")]
NORMAL = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}{% for i in range(3) %}{{ i }}{% endfor %}"


def _render(source: str, **limits: float) -> str:
    template = ChatTemplate(source, origin="/models/evil.gguf", **limits)  # type: ignore[arg-type]
    return template.render(MESSAGES, add_generation_prompt=True)


def test_an_ordinary_template_renders_as_before() -> None:
    """The control: the bounds change nothing for a working template."""
    assert _render(NORMAL, render_seconds=0.5) == "<user>hi012"


def test_nested_empty_loops_stop_at_the_deadline_naming_the_file() -> None:
    source = "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}x"
    with pytest.raises(TemplateError) as caught:
        _render(source, render_seconds=0.5)
    message = str(caught.value)
    assert message.startswith("/models/evil.gguf: the chat template ran longer than 0.5 s")
    assert "\n" not in message


def test_a_template_that_floods_its_output_is_stopped() -> None:
    source = "{% for i in range(99999) %}{{ 'x' * 9999 }}{% endfor %}"
    with pytest.raises(TemplateError, match="wrote more than 1000000 characters"):
        _render(source, max_output_chars=1_000_000)
    assert (
        len(
            _render(
                "{% for i in range(99) %}{{ 'x' * 9999 }}{% endfor %}", max_output_chars=1_000_000
            )
        )
        == 99 * 9999
    )


@pytest.mark.parametrize(
    ("expression", "why"),
    [
        ("'x' * 10**10", "built a sequence of 10000000000 items"),
        ("[1] * 10**9", "built a sequence of 1000000000 items"),
        ("7 ** 99999999", "raised a number to the power 99999999"),
        ("range(10**9) | list", "asked for a range of 1000000000 numbers"),
    ],
)
def test_memory_bombs_are_refused_before_they_are_built(expression: str, why: str) -> None:
    with pytest.raises(TemplateError, match=why):
        _render("{{ " + expression + " }}")
    assert _render("{{ 'ab' * 3 }}{{ 2 ** 10 }}") == "ababab1024"  # small ones still work


def test_a_hostile_template_in_a_gguf_is_named_by_its_file(tmp_path: Path) -> None:
    import gguf

    from frogdesk.engine.template import load_gguf_template

    path = tmp_path / "hostile.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_chat_template(
        "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}"
    )
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    template = load_gguf_template(path)
    template.render_seconds = 0.5
    with pytest.raises(TemplateError) as caught:
        template.render(MESSAGES, add_generation_prompt=True)
    assert str(caught.value).startswith(f"{path}: the chat template ran longer than 0.5 s")


HANG = 60.0
"""Generous bound on a rendering that must stop (old code ran on for minutes, or forever)."""
DOUBLED = "{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(20) %}STEP{% endfor %}"
"""Eight letters doubled twenty times: 8 Mi characters, eight times the cap the bombs render under.
The widths below (200,000,000) are two hundred times that cap."""


def _outcome(source: str, **limits: float) -> str | BaseException:
    """The rendering or the error it raised; the test fails if it has not ended after HANG s."""
    box: list[str | BaseException] = []

    def render() -> None:
        try:
            box.append(_render(source, **limits))
        except Exception as exc:
            box.append(exc)

    thread = threading.Thread(target=render, name="bomb", daemon=True)
    thread.start()
    thread.join(HANG)
    assert box, f"still rendering after {HANG:g} s"
    return box[0]


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("{{ 'x'|center(200000000)|length }}", "with the `center` filter"),
        ("{{ '%200000000d'|format(1)|length }}", "with the `format` filter"),
        ("{{ '{:>200000000}'.format(1)|length }}", "with str.format"),
        ("{{ '{:>{w}}'.format(1, w=200000000)|length }}", "with str.format"),
        ("{{ ('%200000000d' % 1)|length }}", "with `%`"),
        ("{{ 'x'.ljust(200000000)|length }}", "with str.ljust"),
        ("{{ 'x'.rjust(200000000)|length }}", "with str.rjust"),
        ("{{ 'a\nb'|indent(200000000)|length }}", "with the `indent` filter"),
        ("{{ ('ab ' * 200000)|wordwrap(1, wrapstring='x' * 10)|length }}", "`wordwrap` filter"),
        (DOUBLED.replace("STEP", "{% set ns.s = ns.s + ns.s %}") + "{{ ns.s|length }}", "with `+`"),
        (DOUBLED.replace("STEP", "{% set ns.s = ns.s ~ ns.s %}") + "{{ ns.s|length }}", "with `~`"),
        (
            DOUBLED.replace("STEP", "{% set ns.s = ns.s|replace('x', 'xx') %}")
            + "{{ ns.s|length }}",
            "`replace`",
        ),
        (
            DOUBLED.replace("STEP", "{% set t %}{{ ns.s }}{{ ns.s }}{% endset %}{% set ns.s = t %}")
            + "{{ ns.s|length }}",
            "a captured block",
        ),
        ("{% set s = 'x' * 500000 %}{{ ([s] * 100)|string|length }}", "the `string` filter"),
        ("{% set s = 'x' * 500000 %}{{ ([s] * 100)|tojson|length }}", "the `tojson` filter"),
        ("{% set s = 'x' * 500000 %}{{ range(100)|map('string')|join(s)|length }}", "`join`"),
        (
            "{% set ns = namespace(n=2**200) %}{% for i in range(18) %}"
            "{% set ns.n = ns.n * ns.n %}{% endfor %}{{ ns.n > 0 }}",
            "a number of more than",
        ),
    ],
)
def test_every_text_a_template_builds_is_measured_before_it_is_built(source: str, why: str) -> None:
    outcome = _outcome(source, max_output_chars=1_000_000)
    assert isinstance(outcome, TemplateError), f"rendered {str(outcome)[:60]!r}"
    message = str(outcome)
    assert message.startswith("/models/evil.gguf: the chat template ") and why in message
    assert message.endswith("was stopped; use a model file with a working template")


def test_a_filter_walking_millions_of_items_one_by_one_is_refused() -> None:
    outcome = _outcome("{{ ('x' * 2000000)|unique|list|length }}")
    assert isinstance(outcome, TemplateError) and "made the `unique` filter handle" in str(outcome)
    assert _render("{{ 'abca'|unique|join }}") == "abc"  # the control


def test_a_loop_with_an_empty_body_stops_at_the_deadline() -> None:
    source = "{% set s = 'x' * 999999 %}{% for c in s %}{% for d in s %}{% endfor %}{% endfor %}"
    outcome = _outcome(source, render_seconds=0.5)
    assert isinstance(outcome, TemplateError) and "ran longer than 0.5 s" in str(outcome)
    assert _render("{% for c in 'ab' %}{{ loop.index }}{{ c }}{% endfor %}") == "1a2b"


def test_the_lipsum_global_is_gone() -> None:
    outcome = _outcome("{{ lipsum(5) }}")
    assert isinstance(outcome, TemplateError) and "'lipsum' is undefined" in str(outcome)
    assert _render("{{ namespace(a=1).a }}{{ dict(b=2).b }}") == "12"  # the other globals stay


def test_small_uses_of_every_bounded_operation_render_as_before() -> None:
    source = (
        "{{ 'x'|center(5) }}|{{ '%3d' % 7 }}|{{ '%03d'|format(7) }}|{{ '{:>3}'.format(1) }}|"
        "{{ 'a' ~ 'b' }}|{{ 'ab' + 'c' }}|{{ [1, 2]|join('-') }}|{{ 'a\nb'|indent(2) }}|"
        "{{ 'x'.ljust(3) }}|{{ 'a b'.split()|length }}|{{ {'a': [1]}|tojson }}|{{ 2 ** 10 }}"
    )
    assert _render(source) == '  x  |  7|007|  1|ab|abc|1-2|a\n  b|x  |2|{"a": [1]}|1024'


def test_the_tiny_qwen35_template_renders_as_plain_jinja_renders_it() -> None:
    """The control: the bounds change nothing for a real template."""
    tool: ToolSchema = {
        "type": "function",
        "function": {"name": "Read", "description": "Read a file.", "parameters": {}},
    }
    messages = [
        Message("system", "Be brief."),
        Message("user", "héllo <b>"),
        Message(
            "assistant",
            "Reading.",
            reasoning="why",
            tool_calls=(ToolCall("Read", {"file_path": "a.py", "offset": 2}, id="c0"),),
        ),
        Message("tool", "1. x", tool_call_id="c0"),
        Message("user", "thanks"),
    ]
    plain = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    plain.filters["tojson"] = lambda value, **kwargs: json.dumps(value, ensure_ascii=False)
    context: dict[str, Any] = {
        "messages": [m.to_template_dict() for m in messages],
        "tools": [dict(tool)],
        "add_generation_prompt": True,
        "enable_thinking": True,
        "bos_token": "",
        "eos_token": "",
    }
    expected = plain.from_string(CHAT_TEMPLATE).render(**context)
    text = ChatTemplate(CHAT_TEMPLATE).render(messages, [tool], add_generation_prompt=True)
    assert text == expected
    assert "<parameter=offset>\n2\n</parameter>" in text and text.endswith("<think>\n")
