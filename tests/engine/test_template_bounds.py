"""A chat template is code from a model file: it cannot hang FrogDesk nor flood its memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk.engine.template import ChatTemplate, TemplateError
from frogdesk.engine.types import Message

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
