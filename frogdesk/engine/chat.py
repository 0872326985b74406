"""Messages, tool calls, stream events and the Backend protocol shared by every backend."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from frogdesk.config import DEFAULT_MAX_CONTEXT_TOKENS, DEFAULT_MAX_TOKENS_PER_TURN

Role = Literal["system", "user", "assistant", "tool"]
FinishReason = Literal["stop", "tool_calls", "length", "cancelled", "error", "max_context_len"]
ToolChoice = Literal["auto", "required", "none"]
ToolSchema = dict[str, Any]
"""An OpenAI function-tool schema: {"type": "function", "function": {name, description, parameters}}."""


@dataclass(frozen=True)
class ToolCall:
    """One parsed tool call: the function name and its arguments, coerced by the tool's schema."""

    name: str
    arguments: dict[str, Any]
    id: str = ""


@dataclass(frozen=True)
class Message:
    """One chat message as the model's chat template sees it."""

    role: Role
    content: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""
    name: str = ""
    raw: str = field(default="", compare=False)
    """For an assistant message: the reply exactly as the model generated it, after the
    generation prompt and before the end-of-turn token ("" when unknown). Only the llama
    backend reads it, to give a resumed conversation the model's own tokens back; it takes
    no part in rendering or in comparing messages."""
    raw_tokens: tuple[int, ...] = field(default=(), compare=False)
    """The sampled token ids of `raw` (llama backend); used instead of tokenizing `raw`
    when they decode to exactly `raw` with the model's vocabulary, since a model does not
    always sample the tokenizer's own split of its text."""

    def to_template_dict(self) -> dict[str, Any]:
        """The dict a Jinja chat template (and an OpenAI endpoint) expects."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.reasoning:
            out["reasoning_content"] = self.reasoning
        if self.tool_calls:
            out["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in self.tool_calls
            ]
        if self.tool_call_id:
            out["tool_call_id"] = self.tool_call_id
        if self.name:
            out["name"] = self.name
        return out


@dataclass(frozen=True)
class GenerationSettings:
    """Sampling and budget settings for one reply."""

    temperature: float | None = None
    """None means the model's own default (GGUF general.sampling.*), else the vendor's 0.6."""
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS_PER_TURN
    """Per-turn token cap; a reply cut by it finishes with `length`."""
    max_context: int = DEFAULT_MAX_CONTEXT_TOKENS
    """Context budget; a request that cannot fit finishes with `max_context_len`."""
    seed: int | None = None
    tool_choice: ToolChoice = "auto"
    enable_thinking: bool = True


# Stream events --------------------------------------------------------------


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of the model's reasoning (text before `</think>`)."""

    text: str


@dataclass(frozen=True)
class ContentDelta:
    """A piece of the visible reply content."""

    text: str


@dataclass(frozen=True)
class Decoded:
    """Progress: the reply holds `tokens` generated tokens so far (sent as each one is taken,
    so it counts the tokens of a tool call the parser is still holding back as text)."""

    tokens: int


@dataclass(frozen=True)
class ToolCallEvent:
    """A complete, parsed tool call."""

    call: ToolCall
    recovered: tuple[str, ...] = ()
    """The drifts from the exact format this call was recovered from (empty: exact)."""


@dataclass(frozen=True)
class Recovered:
    """A drift recovered outside any call (a `<tool_call>` inside reasoning read as reasoning)."""

    kind: str


@dataclass(frozen=True)
class ToolCallError:
    """A tool call the parser could not accept; `error` is said to the model, `raw` is the text."""

    raw: str
    error: str
    name: str = ""


@dataclass(frozen=True)
class Usage:
    """Token accounting for one reply."""

    prompt_tokens: int
    """Tokens in the whole prompt (the transcript before generation)."""
    evaluated_tokens: int
    """Prompt tokens actually decoded for this reply."""
    reused_tokens: int
    """Prompt tokens whose state was reused from earlier turns."""
    completion_tokens: int
    prefill_seconds: float = 0.0
    decode_seconds: float = 0.0
    ttft_seconds: float = 0.0
    drafted_tokens: int = 0
    """Drafted tokens verified by the model (speculative decoding; llama backend)."""
    accepted_tokens: int = 0
    """Drafted tokens the model accepted: each saved one decode step."""
    drafted_by: dict[str, int] = field(default_factory=dict)
    """`drafted_tokens` by drafter name ("ngram", "mtp")."""
    accepted_by: dict[str, int] = field(default_factory=dict)
    """`accepted_tokens` by drafter name."""

    @property
    def decode_rate(self) -> float:
        """Tokens per second of decoding: the tokens after the first over the time from the
        first to the last (a drafted token the model accepted counts once, as it is emitted
        once); 0.0 for a reply of fewer than two tokens."""
        if self.completion_tokens < 2 or self.decode_seconds <= 0:
            return 0.0
        return (self.completion_tokens - 1) / self.decode_seconds


@dataclass(frozen=True)
class Finished:
    """The last event of every reply."""

    reason: FinishReason
    error: str = ""
    raw_text: str = ""
    """The reply exactly as generated, for transcripts and bug reports."""
    raw_tokens: tuple[int, ...] = ()
    """The token ids of `raw_text` as sampled (llama backend; end-of-turn token excluded)."""


EngineEvent = (
    ReasoningDelta
    | ContentDelta
    | Decoded
    | ToolCallEvent
    | ToolCallError
    | Recovered
    | Usage
    | Finished
)


@dataclass
class Reply:
    """A whole reply gathered from a stream of events."""

    tool_calls: list[ToolCall] = field(default_factory=list)
    errors: list[ToolCallError] = field(default_factory=list)
    recoveries: list[str] = field(default_factory=list)
    """Every drift recovered in the reply, by kind, once per occurrence."""
    usage: Usage | None = None
    finish: Finished | None = None
    # Pieces, joined when read: `+=` on an attribute copies the whole text every time
    # (a 9 MiB reply in 4 kB pieces cost about 54 s of CPU).
    _reasoning: list[str] = field(default_factory=list, repr=False)
    _content: list[str] = field(default_factory=list, repr=False)

    @property
    def reasoning(self) -> str:
        """The reasoning so far."""
        if len(self._reasoning) > 1:
            self._reasoning[:] = ["".join(self._reasoning)]
        return self._reasoning[0] if self._reasoning else ""

    @property
    def content(self) -> str:
        """The content so far."""
        if len(self._content) > 1:
            self._content[:] = ["".join(self._content)]
        return self._content[0] if self._content else ""

    def add(self, event: EngineEvent) -> None:
        """Fold one event into the reply."""
        if isinstance(event, ReasoningDelta):
            self._reasoning.append(event.text)
        elif isinstance(event, ContentDelta):
            self._content.append(event.text)
        elif isinstance(event, ToolCallEvent):
            self.tool_calls.append(event.call)
            self.recoveries.extend(event.recovered)
        elif isinstance(event, ToolCallError):
            self.errors.append(event)
        elif isinstance(event, Recovered):
            self.recoveries.append(event.kind)
        elif isinstance(event, Usage):
            self.usage = event
        elif isinstance(event, Decoded):
            pass  # progress only: the reply's tokens are counted in its Usage
        else:
            self.finish = event


@dataclass(frozen=True)
class BackendInfo:
    """What the user is shown about a backend (status bar, doctor, trajectories)."""

    kind: str
    """`llama`, `openai` or `script`."""
    model: str
    """Model file, endpoint model name or script path."""
    quant: str = ""
    device: str = "CPU"
    """`CPU`, `GPU` or `GPU 20/33 layers`."""
    context_size: int = 0
    dialect: str = ""
    """The tool-call dialect the model speaks (`qwen3_coder_xml`, `hermes_json`; "" unknown)."""


class Backend(Protocol):
    """Anything that turns messages into a stream of engine events."""

    @property
    def info(self) -> BackendInfo:
        """Describe the backend for the user."""
        ...

    def generate(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        settings: GenerationSettings,
        cancel: threading.Event | None = None,
    ) -> Iterator[EngineEvent]:
        """Stream the next assistant reply; always ends with one `Finished` event.

        Setting `cancel` from another thread ends the stream within one decode step
        with `Finished("cancelled")`.
        """
        ...

    def count_tokens(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> int:
        """Tokens the rendered prompt takes (an estimate where the backend cannot tokenize)."""
        ...

    def close(self) -> None:
        """Free the model and any resources."""
        ...
