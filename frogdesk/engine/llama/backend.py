"""The `llama` backend: an embedded llama.cpp model that never re-reads the conversation."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import llama_cpp

from frogdesk.engine.chat import (
    BackendInfo,
    EngineEvent,
    Finished,
    GenerationSettings,
    Message,
    ToolSchema,
)
from frogdesk.engine.llama.conversation.generation import ReplyRun
from frogdesk.engine.llama.conversation.segments import KeptReply, render_with_raw, reply_closing
from frogdesk.engine.llama.conversation.sequence import LlamaSequence
from frogdesk.engine.llama.conversation.transcript import TokenTranscript
from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.errors import DecodeError
from frogdesk.engine.llama.load.log import LlamaLogCapture, buffer_sizes
from frogdesk.engine.llama.load.model import LlamaModel
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.llama.speculative.choice import DrafterChoice
from frogdesk.engine.llama.speculative.drafting import Drafter, DraftPolicy, DraftStats
from frogdesk.engine.llama.speculative.listing import unnumbered
from frogdesk.engine.llama.speculative.mtp import MtpDrafter, mtp_unavailable
from frogdesk.engine.llama.speculative.ngram import NgramDrafter
from frogdesk.engine.template import ChatTemplate, TemplateError
from frogdesk.engine.toolcall.detect import choose_dialect

_FILE_LOG = logging.getLogger("frogdesk.llama")


@dataclass(frozen=True)
class _Plan:
    """What a request changes: where the transcript is cut and what is appended."""

    keep_messages: int
    keep_pos: int
    starts_in_reasoning: bool
    history: list[int]
    prompt: list[int]
    messages: tuple[Message, ...]
    key: str

    @property
    def prompt_len(self) -> int:
        return self.keep_pos + len(self.history) + len(self.prompt)


def model_template(model: LlamaModel, model_path: Path) -> ChatTemplate:
    """The chat template stored in the GGUF, with the model's own BOS and EOS pieces."""
    source = model.chat_template()
    if source is None:
        raise TemplateError(f"{model_path}: the GGUF has no chat template")
    return ChatTemplate(
        source,
        bos_token=model.piece(model.bos).decode("utf-8", "replace"),
        eos_token=model.piece(model.eos).decode("utf-8", "replace"),
        origin=str(model_path),
    )


class LlamaBackend:
    """A GGUF run in-process; the conversation is kept as tokens between replies."""

    def __init__(
        self,
        model_path: Path,
        options: LlamaOptions | None = None,
        *,
        progress: Callable[[float], None] | None = None,
    ) -> None:
        self.options = options if options is not None else LlamaOptions()
        verbose = self.options.verbose
        self._log = LlamaLogCapture(verbose=verbose)
        self.model = LlamaModel(
            Path(model_path),
            self.options,
            log=self._log,
            progress=progress,
            load_mtp=self.options.speculative,
        )
        try:
            self.context = LlamaContext(self.model, self.options)
            self.template = model_template(self.model, Path(model_path))
            self.dialect_choice = choose_dialect(self.template)
            """The tool-call dialect the model's own template teaches (refused at load if
            FrogDesk does not speak it)."""
            self._closing = reply_closing(self.template)
        except BaseException:
            self.model.close()
            raise
        self.load_log: list[str] = self._log.lines
        """llama.cpp's log lines from loading the model and making the contexts (the MTP
        draft context's too, when there is one)."""
        self.transcript = TokenTranscript()
        self.sequence = LlamaSequence(
            self.model, self.context, self.transcript, max_snapshots=self.options.max_snapshots
        )
        self.ngram = NgramDrafter(unambiguous=True)
        """Drafts from the conversation's own tokens (alone, or beside the MTP head)."""
        self.drafter: Drafter = self.ngram
        self.draft_policy: DraftPolicy = DraftPolicy(rollback_redecodes=self.model.is_hybrid)
        """Acceptance and batch costs measured so far (kept across replies)."""
        self._remembered: set[int] = set()
        """Tool results already given to the n-gram drafter (by hash of their text)."""
        self.last_drafts = DraftStats()
        """Drafted and accepted tokens of the newest reply, per drafter."""
        self.mtp: MtpDrafter | None = None
        self.mtp_status = "off: speculative decoding is off"
        """Whether the MTP head drafts ("on") or why not ("off: ...")."""
        if self.options.speculative:
            self._start_mtp()
            self.load_log = self._log.lines
        self._busy = threading.Lock()

    def _start_mtp(self) -> None:
        """Draft with the model's MTP head too when the GGUF has one (n-gram only otherwise)."""
        reason = mtp_unavailable(self.model)
        if not reason:
            try:
                self.mtp = MtpDrafter(self.model, self.context, self.options)
            except RuntimeError as exc:
                reason = str(exc)
        if self.mtp is None:
            self.mtp_status = f"off: {reason}"
        else:
            choice = DrafterChoice([self.ngram, self.mtp], rollback_redecodes=self.model.is_hybrid)
            self.drafter, self.draft_policy = choice, choice
            self.mtp_status = "on"
        _FILE_LOG.info("MTP drafting %s", self.mtp_status)

    @classmethod
    def like(cls, other: LlamaBackend, model_path: Path) -> LlamaBackend:
        """A backend on another file (another quant) with the same options as `other`.

        Follow with `prefill(messages, tools)` to carry a conversation over; its price in
        tokens is `reprefill_cost`.
        """
        return cls(model_path, other.options)

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

    # Planning -------------------------------------------------------------------

    def _tokenize_first(self, text: str) -> list[int]:
        bos_text = self.template.bos_token
        add = self.model.add_bos and not (bos_text and text.startswith(bos_text))
        return self.model.tokenize(text, add_special=add)

    def _kept_tokens(self, reply: KeptReply) -> list[int]:
        """The sampled tokens of a kept reply when they are this vocabulary's, else its text's."""
        tokens = list(reply.tokens)
        if (
            tokens
            and all(0 <= t < self.model.n_vocab for t in tokens)
            and self.model.detokenize(tokens) == reply.text
        ):
            return tokens
        return self.model.tokenize(reply.text)

    def _tokenize_pieces(self, pieces: Sequence[str | KeptReply], *, first: bool) -> list[int]:
        """Each piece tokenized on its own (as when it was live); BOS rules for the first."""
        out: list[int] = []
        for i, piece in enumerate(pieces):
            if isinstance(piece, KeptReply):
                out += self._kept_tokens(piece)
            elif first and i == 0:
                out += self._tokenize_first(piece)
            elif piece:
                out += self.model.tokenize(piece)
        return out

    def _feasible(self, pos: int) -> bool:
        t = self.transcript
        if pos >= t.n_past or pos == 0 or not self.model.is_hybrid:
            return True
        return any(b.pos == pos and b.captured and b.state for b in t.boundaries)

    def _plan(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        *,
        enable_thinking: bool,
        generation_prompt: bool,
    ) -> _Plan:
        t = self.transcript
        key = json.dumps([list(tools), enable_thinking], sort_keys=True, default=str)
        k = t.common_prefix(messages) if t.context_key == key else 0
        options = [(k, t.covered)] if k == len(t.messages) and k > 0 else []
        options += [(b.n_messages, b.pos) for b in reversed(t.boundaries) if b.n_messages <= k]
        for n, pos in [*options, (0, 0)]:
            if n > 0 and not self._feasible(pos):
                continue
            try:
                chunks = render_with_raw(self.template, messages, tools, start=n,
                                         closing=self._closing, enable_thinking=enable_thinking,
                                         generation_prompt=generation_prompt)  # fmt: skip
            except TemplateError:
                if n == 0:
                    raise
                continue
            history = self._tokenize_pieces(chunks.pieces, first=n == 0)
            prompt = self.model.tokenize(chunks.generation_prompt)
            return _Plan(n, pos, chunks.starts_in_reasoning, history, prompt, tuple(messages), key)
        raise AssertionError("unreachable: the full render is always an option")

    def _apply(self, plan: _Plan) -> None:
        t = self.transcript
        ctx = self.context
        if plan.keep_pos == 0:
            if t.n_past > 0:
                ctx.clear()
            t.reset()
        else:
            if plan.keep_pos < t.n_past:
                point = next(b for b in t.boundaries if b.pos == plan.keep_pos)
                ok = ctx.restore(point.state, point.pos) if point.state else ctx.trim(point.pos)
                if not ok:
                    ctx.clear()
                    t.reset()
                    raise DecodeError("could not return to an earlier turn; context cleared")
                t.n_past = plan.keep_pos
            t.cut(plan.keep_pos, plan.keep_messages)
        t.tokens.extend(plan.history)
        t.messages.extend(plan.messages[plan.keep_messages :])
        t.covered = len(t.tokens)
        t.add_boundary(len(t.messages), t.covered)
        t.tokens.extend(plan.prompt)
        t.context_key = plan.key

    def watch_prefill(self, heard: Callable[[int, int], None] | None) -> None:
        """Hear each prompt prefill's progress: (tokens decoded, tokens to decode), per batch."""
        self.sequence.on_prefill = heard

    def catch_up(self, cancel: threading.Event | None = None) -> int:
        """Decode every transcript token not yet evaluated (see `LlamaSequence.catch_up`)."""
        return self.sequence.catch_up(cancel)

    # Requests -------------------------------------------------------------------

    def count_tokens(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> int:
        """Tokens of the whole prompt, generation prompt included (raw replies as generated)."""
        chunks = render_with_raw(self.template, messages, tools, start=0, closing=self._closing,
                                 enable_thinking=True)  # fmt: skip
        pieces = [*chunks.pieces[:-1], f"{chunks.pieces[-1]}{chunks.generation_prompt}"]
        return len(self._tokenize_pieces(pieces, first=True))

    def reprefill_cost(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        *,
        enable_thinking: bool = True,
    ) -> int:
        """Tokens `prefill` would evaluate to bring this backend up to `messages`."""
        plan = self._plan(messages, tools, enable_thinking=enable_thinking, generation_prompt=False)
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
            plan = self._plan(messages, tools, enable_thinking=enable_thinking,
                              generation_prompt=False)  # fmt: skip
            if plan.prompt_len > self.context.n_ctx:
                raise ValueError(
                    f"the conversation takes {plan.prompt_len} tokens, more than the "
                    f"context of {self.context.n_ctx}"
                )
            self._apply(plan)
            return self.catch_up(cancel)

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
        try:
            plan = self._plan(messages, tools, enable_thinking=settings.enable_thinking,
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
            self._apply(plan)
        except DecodeError as exc:
            yield Finished("error", error=str(exc))
            return
        speculative = self.options.speculative
        if speculative:
            self._remember_listings(messages)
        run = ReplyRun(self.sequence, tools, settings, plan.starts_in_reasoning, limit,
                       drafter=self.drafter if speculative else None,
                       policy=self.draft_policy if speculative else None,
                       dialect=self.dialect_choice.dialect)  # fmt: skip
        self.last_drafts = run.drafts
        yield from run.events(cancel)
        if run.recorded is not None:
            self._record(run.recorded, run.ended_on_eog)

    def _remember_listings(self, messages: Sequence[Message]) -> None:
        """Give the drafter the plain lines of files the conversation read with numbers."""
        for message in messages:
            if message.role != "tool" or not message.content:
                continue
            key = hash(message.content)
            if key in self._remembered:
                continue
            self._remembered.add(key)
            text = unnumbered(message.content)
            if text is not None:
                self.ngram.remember(self.model.tokenize(text))

    def _record(self, reply: Message, eog_piece: str) -> None:
        """Keep a reply as a message of the transcript, closed as the template closes it.

        Replies cut by the token cap are kept too: when the loop sends them back they match.
        """
        t = self.transcript
        closing = self._closing
        glue = closing[len(eog_piece) :] if eog_piece and closing.startswith(eog_piece) else closing
        t.tokens.extend(self.model.tokenize(glue) if glue else [])
        t.messages.append(reply)
        t.covered = len(t.tokens)
        t.add_boundary(len(t.messages), t.covered)

    def close(self) -> None:
        """Free the context and the model; llama.cpp's log goes back to its default handler."""
        if self.mtp is not None:
            self.mtp.close()
        self.context.close()
        self.model.close()
        self._log.uninstall()


def _quant_name(file_type: object) -> str:
    if not isinstance(file_type, int):
        return ""
    from gguf import LlamaFileType

    try:
        return LlamaFileType(file_type).name.removeprefix("MOSTLY_").removeprefix("ALL_")
    except ValueError:
        return str(file_type)
