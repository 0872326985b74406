"""Rendering the text a conversation gains at each turn, without re-rendering its history.

The template is asked to render the new messages after a small stand-in history (one
user query, and one assistant reply when the transcript ends with one), and the part
after the stand-in is the segment. This is the template's own text for those messages
wherever the template renders a message independently of the ones before it; the
Qwen3.5 template does, except that an assistant message placed before the last real
user query loses its reasoning. Reasoning the model generated is therefore kept in the
transcript even after a later user query, where a full re-render would drop it.

A conversation the backend did not generate itself (a resume in a new process, another
quant) can carry each reply's raw text (`Message.raw`); `render_with_raw` writes those
replies back as they were generated instead of asking the template to re-render them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from frogdesk.engine.chat import Message, ToolSchema
from frogdesk.engine.errors import TemplateError
from frogdesk.engine.template import ChatTemplate

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


@dataclass(frozen=True)
class KeptReply:
    """A reply written back as generated: its raw text and, where known, its sampled tokens."""

    text: str
    tokens: tuple[int, ...] = ()


@dataclass(frozen=True)
class Chunks:
    """Text to append as separately tokenized pieces, then the generation prompt.

    Each piece is tokenized on its own, as the backend tokenized it when it was live: a
    rendered run of messages, the generation prompt before a kept reply, the reply's raw
    text, and the text that closes it.
    """

    pieces: tuple[str | KeptReply, ...]
    generation_prompt: str
    starts_in_reasoning: bool


def _fits(prompt: Segment, raw: str) -> bool:
    """Whether `raw` can follow the generation prompt (a reply written with thinking on
    closes its reasoning; after a prompt that already closed it, it cannot be used)."""
    return prompt.starts_in_reasoning or "</think>" not in raw


def render_with_raw(
    template: ChatTemplate,
    messages: Sequence[Message],
    tools: Sequence[ToolSchema],
    *,
    start: int,
    closing: str,
    enable_thinking: bool,
    generation_prompt: bool = True,
) -> Chunks:
    """The text `messages[start:]` add to a transcript holding `messages[:start]`.

    Assistant messages that carry `raw` (their reply as generated) are written back as
    generation prompt + raw + `closing`, the tokens the model read when it wrote them;
    runs of other messages are rendered by the template as `render_first` (at `start` 0)
    or `render_appended` render them. Raises `TemplateError` like those.
    """

    def run(lo: int, hi: int, prompt: bool) -> Segment:
        if lo == 0:
            return render_first(template, messages[:hi], tools, enable_thinking=enable_thinking,
                                generation_prompt=prompt)  # fmt: skip
        return render_appended(template, messages[lo - 1].role == "assistant", messages[lo:hi],
                               enable_thinking=enable_thinking, generation_prompt=prompt)  # fmt: skip

    pieces: list[str | KeptReply] = []
    lo = start
    for at in range(max(start, 1), len(messages)):
        message = messages[at]
        if message.role != "assistant" or not message.raw:
            continue
        before = run(lo, at, True)
        if not _fits(before, message.raw):
            continue
        kept = KeptReply(message.raw, message.raw_tokens)
        pieces += [before.history, before.generation_prompt, kept, closing]
        lo = at + 1
    last = run(lo, len(messages), generation_prompt)
    pieces.append(last.history)
    return Chunks(tuple(pieces), last.generation_prompt, last.starts_in_reasoning)


def reply_closing(template: ChatTemplate) -> str:
    """What the template writes after an assistant reply's text (`<|im_end|>\\n` in ChatML)."""
    text = template.render([_STUB_QUERY, _STUB_REPLY], add_generation_prompt=False)
    at = text.rfind(_STUB_MARK)
    if at < 0:
        raise TemplateError("the chat template drops assistant content")
    return text[at + len(_STUB_MARK) :]
