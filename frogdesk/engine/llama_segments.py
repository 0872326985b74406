"""Rendering the text a conversation gains at each turn, without re-rendering its history.

The template is asked to render the new messages after a small stand-in history (one
user query, and one assistant reply when the transcript ends with one), and the part
after the stand-in is the segment. This is the template's own text for those messages
wherever the template renders a message independently of the ones before it; the
Qwen3.5 template does, except that an assistant message placed before the last real
user query loses its reasoning. Reasoning the model generated is therefore kept in the
transcript even after a later user query, where a full re-render would drop it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from frogdesk.engine.template import ChatTemplate, TemplateError
from frogdesk.engine.types import Message, ToolSchema

_STUB_QUERY = Message(role="user", content="FrogDeskStubQuery")
_STUB_MARK = "FrogDeskStubReply"
_STUB_REPLY = Message(role="assistant", content=_STUB_MARK)


@dataclass(frozen=True)
class Segment:
    """Text to append: the new messages, then the generation prompt (may be empty)."""

    history: str
    generation_prompt: str

    @property
    def starts_in_reasoning(self) -> bool:
        """Whether the generation prompt leaves the model inside an open `<think>`."""
        prompt = self.generation_prompt
        return prompt.rfind("<think>") > prompt.rfind("</think>")


def _split(full: str, history: str, base: str) -> Segment:
    if not history.startswith(base) or not full.startswith(history):
        raise TemplateError("the chat template does not render new messages as an appendix")
    return Segment(history[len(base) :], full[len(history) :])


def render_first(
    template: ChatTemplate,
    messages: Sequence[Message],
    tools: Sequence[ToolSchema],
    *,
    enable_thinking: bool,
    generation_prompt: bool = True,
) -> Segment:
    """The whole conversation rendered at once (the transcript is empty)."""
    history = template.render(
        messages, tools, add_generation_prompt=False, enable_thinking=enable_thinking
    )
    if not generation_prompt:
        return Segment(history, "")
    full = template.render(
        messages, tools, add_generation_prompt=True, enable_thinking=enable_thinking
    )
    return _split(full, history, "")


def render_appended(
    template: ChatTemplate,
    after_assistant: bool,
    messages: Sequence[Message],
    *,
    enable_thinking: bool,
    generation_prompt: bool = True,
) -> Segment:
    """The text `messages` add to a transcript that ends with a whole turn.

    `after_assistant` says whether that turn was an assistant reply. Raises
    `TemplateError` when the template does not render the messages as an appendix.
    """
    stub = [_STUB_QUERY, _STUB_REPLY] if after_assistant else [_STUB_QUERY]
    base = template.render(stub, add_generation_prompt=False, enable_thinking=enable_thinking)
    history = template.render(
        [*stub, *messages], add_generation_prompt=False, enable_thinking=enable_thinking
    )
    if not generation_prompt:
        return _split(history, history, base)
    full = template.render(
        [*stub, *messages], add_generation_prompt=True, enable_thinking=enable_thinking
    )
    return _split(full, history, base)


def reply_closing(template: ChatTemplate) -> str:
    """What the template writes after an assistant reply's text (`<|im_end|>\\n` in ChatML)."""
    text = template.render([_STUB_QUERY, _STUB_REPLY], add_generation_prompt=False)
    at = text.rfind(_STUB_MARK)
    if at < 0:
        raise TemplateError("the chat template drops assistant content")
    return text[at + len(_STUB_MARK) :]
