"""A backend that keeps one conversation as tokens between replies and never re-reads it.

`LlamaBackend` (a model and a context of its own) and `SequenceBackend` (one sequence of a
context several attempts share) are both this, built on a different decode target.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

import llama_cpp

from frogdesk.engine.chat import (
    BackendInfo,
    EngineEvent,
    Finished,
    GenerationSettings,
    Message,
    ToolSchema,
)
from frogdesk.engine.errors import TemplateError
from frogdesk.engine.llama.conversation.conversation import Conversation
from frogdesk.engine.llama.conversation.generation import ReplyRun
from frogdesk.engine.llama.conversation.transcript import TokenTranscript
from frogdesk.engine.llama.decode.target import DecodeTarget
from frogdesk.engine.llama.errors import DecodeError
from frogdesk.engine.llama.load.log import LlamaLogCapture, buffer_sizes
from frogdesk.engine.llama.load.model import LlamaModel
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.llama.speculative.drafters import Drafting
from frogdesk.engine.llama.speculative.drafting import DraftStats
from frogdesk.engine.template import ChatTemplate
from frogdesk.engine.toolcall.detect import DialectChoice

_FILE_LOG = logging.getLogger("frogdesk.llama")


class ConversationBackend:
    """One conversation on one decode target of a loaded model."""

    def __init__(
        self,
        options: LlamaOptions,
        log: LlamaLogCapture,
        model: LlamaModel,
        target: DecodeTarget,
        template: ChatTemplate,
        dialect_choice: DialectChoice,
        closing: str,
    ) -> None:
        self.options = options
        self._log = log
        self.model = model
        self.context = target
        self.template = template
        self.dialect_choice = dialect_choice
        """The tool-call dialect the model's own template teaches (refused at load if
        FrogDesk does not speak it)."""
        self.conversation = Conversation(
            model, target, template, closing, max_snapshots=options.max_snapshots
        )
        self.load_log: list[str] = log.lines
        """llama.cpp's log lines from loading the model and making the contexts."""
        self.drafting: Drafting | None = None
        """The drafters and the policy that decides when they draft (None: drafting off)."""
        self.last_drafts = DraftStats()
        """Drafted and accepted tokens of the newest reply, per drafter."""
        self._busy = threading.Lock()

    @property
    def transcript(self) -> TokenTranscript:
        """The conversation's tokens (read them; the conversation alone writes them)."""
        return self.conversation.transcript

    # Description ----------------------------------------------------------------

    @property
    def info(self) -> BackendInfo:
        """The model file, its quant, where it runs and the context size."""
        layers = int(llama_cpp.llama_model_n_layer(self.model.handle)) + 1
        gpu = self.options.n_gpu_layers
        if gpu == 0 or not llama_cpp.llama_supports_gpu_offload():
            device = "CPU"
        elif gpu < 0 or gpu >= layers:
            device = "GPU"
        else:
            device = f"GPU {gpu}/{layers} layers"
        return BackendInfo(
            kind="llama",
            model=str(self.model.path),
            quant=_quant_name(self.model.header.metadata.get("general.file_type")),
            device=device,
            context_size=self.context.n_ctx,
            dialect=self.dialect_choice.dialect.name,
        )

    def buffer_sizes(self) -> dict[str, float]:
        """Buffer sizes (MiB) llama.cpp reported at load: model weights, KV, recurrent, compute."""
        return buffer_sizes(self.load_log)

    def last_logits(self) -> list[float]:
        """Logits after the last evaluated token (for checks against a fresh prefill)."""
        return self.context.logits()

    # Requests -------------------------------------------------------------------

    def watch_prefill(self, heard: Callable[[int, int], None] | None) -> None:
        """Hear each prompt prefill's progress: (tokens decoded, tokens to decode), per batch."""
        self.conversation.on_prefill = heard

    def catch_up(self, cancel: threading.Event | None = None) -> int:
        """Decode every transcript token not yet evaluated (see `Conversation.catch_up`)."""
        return self.conversation.catch_up(cancel)

    def count_tokens(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> int:
        """Tokens of the whole prompt, generation prompt included (raw replies as generated)."""
        return self.conversation.count_tokens(messages, tools)

    def reprefill_cost(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        *,
        enable_thinking: bool = True,
    ) -> int:
        """Tokens `prefill` would evaluate to bring this backend up to `messages`."""
        plan = self.conversation.plan(
            messages, tools, enable_thinking=enable_thinking, generation_prompt=False
        )
        return plan.prompt_len - min(self.transcript.n_past, plan.keep_pos)

    def prefill(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        *,
        enable_thinking: bool = True,
        cancel: threading.Event | None = None,
    ) -> int:
        """Evaluate `messages` (no generation prompt) so the next reply starts at once.

        Returns the tokens evaluated.
        """
        with self._busy:
            conversation = self.conversation
            plan = conversation.plan(messages, tools, enable_thinking=enable_thinking,
                                     generation_prompt=False)  # fmt: skip
            if plan.prompt_len > self.context.n_ctx:
                raise ValueError(
                    f"the conversation takes {plan.prompt_len} tokens, more than the "
                    f"context of {self.context.n_ctx}"
                )
            conversation.apply(plan)
            return conversation.catch_up(cancel)

    def generate(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        settings: GenerationSettings,
        cancel: threading.Event | None = None,
    ) -> Iterator[EngineEvent]:
        """Stream the next assistant reply; see `Backend.generate`."""
        if not self._busy.acquire(blocking=False):
            raise RuntimeError("this backend is already generating")
        try:
            yield from self._generate(messages, tools, settings, cancel)
        finally:
            self._busy.release()

    def _generate(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        settings: GenerationSettings,
        cancel: threading.Event | None,
    ) -> Iterator[EngineEvent]:
        conversation = self.conversation
        try:
            plan = conversation.plan(messages, tools, enable_thinking=settings.enable_thinking,
                                     generation_prompt=True)  # fmt: skip
        except TemplateError as exc:
            yield Finished("error", error=str(exc))
            return
        limit = min(self.context.n_ctx, settings.max_context)
        if plan.prompt_len + 1 > limit:
            yield Finished(
                "max_context_len",
                error=f"the prompt takes {plan.prompt_len} tokens; the context allows {limit}",
            )
            return
        if settings.seed is None and self.options.seed is not None:
            settings = replace(settings, seed=self.options.seed)
        try:
            conversation.apply(plan)
        except DecodeError as exc:
            yield Finished("error", error=str(exc))
            return
        drafting = self.drafting
        if drafting is not None and drafting.enabled:
            drafting.remember_listings(messages, self.model.tokenize)
        run = ReplyRun(conversation, tools, settings, plan.starts_in_reasoning, limit,
                       drafting=drafting, dialect=self.dialect_choice.dialect)  # fmt: skip
        self.last_drafts = run.drafts
        yield from run.events(cancel)
        if run.recorded is not None:
            conversation.record(run.recorded, run.ended_on_eog)

    def close(self) -> None:
        """Free what this backend owns (the subclasses say what that is)."""
        raise NotImplementedError


def _quant_name(file_type: object) -> str:
    if not isinstance(file_type, int):
        return ""
    from gguf import LlamaFileType

    try:
        return LlamaFileType(file_type).name.removeprefix("MOSTLY_").removeprefix("ALL_")
    except ValueError:
        return str(file_type)
