"""One reply on the llama backend: prefill the suffix, sample, stream parsed events."""

from __future__ import annotations

import codecs
import threading
import time
from collections.abc import Callable, Iterator, Sequence

from frogdesk.engine.chat import (
    Decoded,
    EngineEvent,
    Finished,
    FinishReason,
    GenerationSettings,
    Message,
    Reply,
    ToolSchema,
    Usage,
)
from frogdesk.engine.llama.conversation.conversation import Conversation
from frogdesk.engine.llama.decode.sampling import GrammarUse, Sampler, resolve
from frogdesk.engine.llama.errors import DecodeError
from frogdesk.engine.llama.speculative.drafters import Drafting
from frogdesk.engine.llama.speculative.drafting import DraftStats
from frogdesk.engine.toolcall.dialect import XML, ToolCallDialect
from frogdesk.engine.toolcall.grammar import trigger_pattern

THINK_CLOSE = "</think>"


class ReplyRun:
    """Generates one reply; afterwards `recorded` is the reply as a message if it ended cleanly."""

    def __init__(
        self,
        conversation: Conversation,
        tools: Sequence[ToolSchema],
        settings: GenerationSettings,
        starts_in_reasoning: bool,
        limit: int,
        *,
        drafting: Drafting | None = None,
        dialect: ToolCallDialect = XML,
    ) -> None:
        """`drafting` None (or not enabled): every token is decoded alone."""
        self._conversation = conversation
        self._dialect = dialect
        self._tools = tools
        self._settings = settings
        self._starts_in_reasoning = starts_in_reasoning
        self._limit = limit
        self._sampling = resolve(settings, conversation.model.sampling_defaults())
        self._call_token = conversation.model.single_token(dialect.trigger)
        on = drafting is not None and drafting.enabled and conversation.target.can_verify
        self._drafter = drafting.drafter if on and drafting is not None else None
        self._policy = drafting.policy if on and drafting is not None else None
        self.drafts = DraftStats()
        """Tokens drafted and accepted in this reply."""
        self._shadow: list[int] = []
        """A proposal that was not verified, scored against the tokens sampled after it."""
        self._shadow_hits = 0
        self.recorded: Message | None = None
        self.ended_on_eog = ""
        """The text of the end-of-turn token the reply ended with ("" if none)."""

    def _sampler(self, in_reasoning: bool, seed_offset: int) -> Sampler:
        """The chain for the reasoning phase or the content phase of the reply."""
        choice = self._settings.tool_choice
        model = self._conversation.model
        if choice == "none" or not self._tools:
            banned = [self._call_token] if choice == "none" and self._call_token is not None else []
            return Sampler(model, self._sampling, banned=banned, seed_offset=seed_offset)
        if choice == "required" and not in_reasoning:
            grammar = GrammarUse(
                self._dialect.grammar(self._tools, leading_newlines=True), lazy=False
            )
        else:
            tokens = (self._call_token,) if self._call_token is not None else ()
            # llama.cpp matches a trigger pattern against the whole reply at every token, and
            # the cost grows faster than the reply (9 ms a token over the first 250 tokens,
            # 74 ms from 250 to 500, bench/grammar_sampling.py on SmolLM2): only a model
            # without a call token gets one.
            patterns = () if tokens else (trigger_pattern(self._dialect.trigger),)
            grammar = GrammarUse(self._dialect.grammar(self._tools), True, tokens, patterns)
        return Sampler(model, self._sampling, grammar=grammar, seed_offset=seed_offset)

    def events(self, cancel: threading.Event | None) -> Iterator[EngineEvent]:
        """Prefill what is new, then stream the reply; always ends with `Finished`."""
        conv, t = self._conversation, self._conversation.transcript
        started = time.perf_counter()
        reused, prompt_len = t.n_past, len(t.tokens)
        try:
            evaluated = conv.catch_up(cancel)
        except DecodeError as exc:
            yield Finished("error", error=str(exc))
            return
        prefilled = time.perf_counter()
        usage = {"prompt_tokens": prompt_len, "evaluated_tokens": evaluated,
                 "reused_tokens": reused, "prefill_seconds": prefilled - started}  # fmt: skip
        if t.n_past < prompt_len:
            yield Usage(completion_tokens=0, **usage)  # type: ignore[arg-type]
            yield Finished("cancelled")
            return
        stream = ReplyStream(self._conversation, self._tools, self._settings,
                             starts_in_reasoning=self._starts_in_reasoning, limit=self._limit,
                             sampler_for=self._sampler, dialect=self._dialect)  # fmt: skip
        error = ""
        pauses = self._policy.pauses if self._policy is not None else 0
        try:
            yield from self._decode_loop(stream, cancel)
        except DecodeError as exc:
            stream.reason, error = "error", str(exc)
        finally:
            stream.sampler.close()
            if self._policy is not None:
                self.drafts.pauses = self._policy.pauses - pauses
        self.ended_on_eog = stream.ended_on_eog
        yield from stream.finish()
        reply, completion = stream.reply, stream.completion
        reason: FinishReason = stream.reason or "length"
        if reason == "stop" and reply.tool_calls:
            reason = "tool_calls"
        done, first = time.perf_counter(), stream.first
        yield Usage(
            completion_tokens=completion,
            decode_seconds=(done - first) if first else 0.0,
            ttft_seconds=(first - started) if first else 0.0,
            drafted_tokens=self.drafts.drafted,
            accepted_tokens=self.drafts.accepted,
            drafted_by={name: n[0] for name, n in self.drafts.by_drafter.items()},
            accepted_by={name: n[1] for name, n in self.drafts.by_drafter.items()},
            **usage,  # type: ignore[arg-type]
        )
        if reason in ("stop", "tool_calls", "length") and completion > 0:
            self.recorded = Message(
                role="assistant",
                content=reply.content,
                reasoning=reply.reasoning,
                tool_calls=tuple(reply.tool_calls),
            )
        sampled = t.tokens[stream.sampled_from : stream.sampled_from + completion]
        if sampled and self.ended_on_eog:
            sampled = sampled[:-1]
        yield Finished(reason, error=error, raw_text="".join(stream.raw), raw_tokens=tuple(sampled))

    def _decode_loop(
        self, stream: ReplyStream, cancel: threading.Event | None
    ) -> Iterator[EngineEvent]:
        """Sample, stream and decode until the reply ends; `stream.reason` says why.

        The newest sampled token is decoded either alone or with a draft of the tokens that
        may follow it, in one batch. The batch's rows are then sampled in order with the
        same sampler (grammar included), as if each token had been decoded alone, and a
        drafted token is kept only when the sampler picks it from its row. So every emitted
        token is the target's own pick from the logits it computed for that position:
        greedy, the row's argmax; sampled, a draw from the row, which for a drafter that
        proposes one token per position is the speculative-sampling rule (the draft is kept
        with probability p(draft); on a rejection the token drawn follows p without the
        draft, renormalized), so the output follows the model's distribution and the
        sampler draws once per emitted token, as without drafting. The last row of a draft
        accepted whole gives one more token.

        Output is verification-exact, not bit-identical: llama.cpp rounds a multi-token
        batch differently from a 1-token step, so where the top two logits nearly tie a
        greedy pick from a batch row can differ from the one decoding alone makes. Both are
        the model's argmax over logits it computed for that position, the guarantee of
        llama.cpp's and vLLM's speculative decoding (bench/speculative.py reports the gap
        at every divergence).

        Every cycle (the decode of the pending token, with or without a draft, and the
        sampling and emitting of what it yields) is timed for the policy, which stops
        drafting where it does not pay (`DraftPolicy.cycle`).
        """
        conv, policy = self._conversation, self._policy
        sample = True
        mark, emitted, drafted = time.perf_counter(), 0, -1
        while True:
            if sample:
                if stream.stopped_before_sampling(cancel):
                    return
                yield from self._emit(stream, self._pick(stream, -1))
                if stream.reason is not None:
                    return
            if policy is not None:
                now = time.perf_counter()
                if drafted >= 0:
                    policy.cycle(drafted, stream.completion - emitted, now - mark)
                mark, emitted = now, stream.completion
            pending = conv.transcript.tokens[-1]
            draft = self._draft(stream)
            drafted = len(draft)
            if not draft:
                started = time.perf_counter()
                conv.step(pending)
                self._timed(1, started)
                sample = True
                continue
            started = time.perf_counter()
            conv.verify([pending, *draft])
            self._timed(len(draft) + 1, started)
            kept, rejected = 1, False
            for i in range(len(draft) + 1):
                if stream.stopped_before_sampling(cancel):
                    break
                token = self._pick(stream, i)
                yield from self._emit(stream, token)
                if i == len(draft):
                    break
                if token != draft[i]:
                    rejected = True
                    break
                kept += 1
                if stream.reason is not None:
                    break
            accepted = kept - 1
            self.drafts.add(self._drafter.name if self._drafter else "", len(draft), accepted)
            if policy is not None:
                policy.score(accepted, rejected)
            started = time.perf_counter()
            conv.settle(kept)
            if 0 < kept < len(draft) + 1 and (self._conversation.model.is_hybrid or kept == 1):
                # decoded again
                self._timed(kept, started)
            if stream.reason is not None:
                return
            # The token sampled last waits to be decoded.
            sample = False

    def _pick(self, stream: ReplyStream, row: int) -> int:
        """The sampler's token from batch row `row` (-1: the last decoded), accepted into it."""
        # Through the context, which knows which row of the last batch is this sequence's
        # (in a shared batch the last row may be another attempt's).
        sampler, ctx = stream.sampler, self._conversation.target
        if sampler.plain_greedy:
            # Read straight from the logits: cheaper than the sampler chain (the whole
            # vocabulary as candidates), and the same first largest logit.
            token = ctx.choose(sampler, row).token
            sampler.accept(token)
            return token
        return ctx.sample(sampler, row)

    def _emit(self, stream: ReplyStream, token: int) -> Iterator[EngineEvent]:
        yield from stream.emit(token)
        shadow = self._shadow
        if shadow and self._policy is not None:
            if token == shadow[0]:
                self._shadow_hits += 1
                shadow.pop(0)
                if not shadow:
                    self._policy.score(self._shadow_hits, False)
            else:
                self._policy.score(self._shadow_hits, True)
                shadow.clear()

    def _draft(self, stream: ReplyStream) -> list[int]:
        """The drafted tokens to verify with the pending one ([] when drafting does not pay)."""
        drafter, policy, t = self._drafter, self._policy, self._conversation.transcript
        if drafter is None or policy is None:
            return []
        room = min(
            self._settings.max_tokens - stream.completion,  # tokens the reply may still take
            self._limit - len(t.tokens),  # positions left in the context
            self._conversation.target.n_batch
            - 1,  # one batch holds the pending token and the draft
        )
        if room <= 0:
            return []
        proposal = drafter.propose(t.tokens, min(room, policy.max_draft))
        if not proposal:
            return []
        k = policy.length(len(proposal))
        if k == 0 and not self._shadow:
            # Not verified, but scored against what is sampled next: acceptance stays current.
            self._shadow, self._shadow_hits = proposal, 0
        return proposal[:k]

    def _timed(self, n_tokens: int, started: float) -> None:
        """Tell the policy how long a decode call of `n_tokens` (begun at `started`) took."""
        if self._policy is not None:
            self._policy.timed(n_tokens, time.perf_counter() - started)


class ReplyStream:
    """What one reply has produced so far: tokens, text, parsed events and why it ended."""

    def __init__(
        self,
        conversation: Conversation,
        tools: Sequence[ToolSchema],
        settings: GenerationSettings,
        *,
        starts_in_reasoning: bool,
        limit: int,
        sampler_for: Callable[[bool, int], Sampler],
        dialect: ToolCallDialect = XML,
    ) -> None:
        self._conversation = conversation
        self._t = conversation.transcript
        self._model = conversation.model
        self._max_tokens = settings.max_tokens
        self._limit = limit
        self._sampler_for = sampler_for
        self.sampler = sampler_for(starts_in_reasoning, 0)
        """The chain for the current phase (reasoning, then content)."""
        self.sampled_from = len(self._t.tokens)
        self.reply = Reply()
        self.raw: list[str] = []
        self.completion = 0
        self.first = 0.0
        """When the first token was sampled (perf_counter)."""
        self.reason: FinishReason | None = None
        self.ended_on_eog = ""
        """The text of the end-of-turn token the reply ended with ("" if none)."""
        self._parser = dialect.parser(tools, starts_in_reasoning=starts_in_reasoning)
        self._trigger = dialect.trigger
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._in_reasoning = starts_in_reasoning
        self._saw_call = False
        self._tail = ""

    def stopped_before_sampling(self, cancel: threading.Event | None) -> bool:
        """Whether the reply must end before another token is sampled (sets `reason`)."""
        if self.completion >= self._max_tokens:
            self.reason = "length"
        elif cancel is not None and cancel.is_set():
            self.reason = "cancelled"
        return self.reason is not None

    def emit(self, token: int) -> Iterator[EngineEvent]:
        """Take a sampled token into the reply: transcript, text, events, phase, end."""
        self.first = self.first or time.perf_counter()
        self._conversation.take(token)
        self.completion += 1
        if self._model.is_eog(token):
            self.ended_on_eog = self._model.piece(token).decode("utf-8", "replace")
            self.reason = "stop"
            yield Decoded(self.completion)
            return
        text = self._decoder.decode(self._model.piece(token))
        if text:
            self.raw.append(text)
            for event in self._parser.feed(text):
                self.reply.add(event)
                yield event
            window = self._tail + text
            self._saw_call = self._saw_call or self._trigger in window
            if self._in_reasoning and not self._saw_call and THINK_CLOSE in window:
                self._in_reasoning = False
                self.sampler.close()
                self.sampler = self._sampler_for(False, self.completion)
            self._tail = window[-16:]
        yield Decoded(self.completion)
        if self.completion >= self._max_tokens:
            self.reason = "length"
        elif len(self._t.tokens) >= self._limit:
            self.reason = "max_context_len"

    def finish(self) -> Iterator[EngineEvent]:
        """The text and events still held by the UTF-8 decoder and the parser."""
        tail_text = self._decoder.decode(b"", final=True)
        if tail_text:
            self.raw.append(tail_text)
        for event in [*self._parser.feed(tail_text), *self._parser.finish()]:
            self.reply.add(event)
            yield event
