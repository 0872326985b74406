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
from frogdesk.engine.llama.context import DecodeError
from frogdesk.engine.llama.drafting import Drafter, DraftPolicy, DraftStats
from frogdesk.engine.llama.sampling import GrammarUse, Pick, Sampler, resolve
from frogdesk.engine.llama.sequence import LlamaSequence
from frogdesk.engine.toolcall.dialect import XML, ToolCallDialect
from frogdesk.engine.toolcall.grammar import trigger_pattern

THINK_CLOSE = "</think>"
GREEDY_TIE_FRACTION = 0.04
"""A greedy pick made from logits a verification batch touched (a batch row, or a step
after batch-made tokens) is trusted when it leads the next possible token by at least this
fraction of the row's largest |logit|. bench/verify_rounding.py measured how far the gap
between the top token and any of the next 15 moves against 1-token decoding: 2.2% to 2.9%
of that on SmolLM2 Q4_1 between runs (all logits move up to 5%, mostly together); 4%
leaves 1.4x headroom. Greedy replies are drafted only when the policy asks for it
(`DraftPolicy.greedy_drafting`)."""


class ReplyRun:
    """Generates one reply; afterwards `recorded` is the reply as a message if it ended cleanly."""

    def __init__(
        self,
        sequence: LlamaSequence,
        tools: Sequence[ToolSchema],
        settings: GenerationSettings,
        starts_in_reasoning: bool,
        limit: int,
        *,
        drafter: Drafter | None = None,
        policy: DraftPolicy | None = None,
        dialect: ToolCallDialect = XML,
    ) -> None:
        self._seq = sequence
        self._dialect = dialect
        self._tools = tools
        self._settings = settings
        self._starts_in_reasoning = starts_in_reasoning
        self._limit = limit
        self._sampling = resolve(settings, sequence.model.sampling_defaults())
        self._call_token = sequence.model.single_token(dialect.trigger)
        self._drafter = drafter
        self._policy = policy
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
        model = self._seq.model
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
        seq, t = self._seq, self._seq.transcript
        started = time.perf_counter()
        reused, prompt_len = t.n_past, len(t.tokens)
        try:
            evaluated = seq.catch_up(cancel)
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
        stream = ReplyStream(self._seq, self._tools, self._settings,
                             starts_in_reasoning=self._starts_in_reasoning, limit=self._limit,
                             sampler_for=self._sampler, dialect=self._dialect)  # fmt: skip
        error = ""
        try:
            yield from self._decode_loop(stream, cancel)
        except DecodeError as exc:
            stream.reason, error = "error", str(exc)
        finally:
            stream.sampler.close()
        self.ended_on_eog = stream.ended_on_eog
        # A greedy reply's batch-made tokens are decoded again alone before a next turn reads
        # them, so that turn sees the cache decoding without drafting leaves.
        self._seq.alone_before_next = self._sampling.temperature <= 0
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
        same sampler (grammar included), as if each token had been decoded alone: a drafted
        token is kept only when the sampler picks it, so the output follows the model's own
        distribution and the sampler draws once per emitted token, as without drafting.
        The last row of a draft accepted whole gives one more token.

        Greedy replies are kept identical to decoding without drafting. llama.cpp rounds a
        multi-token batch differently from a 1-token step, and the cache then holds that
        rounding too, so a greedy pick made from a batch row, or after one, is trusted only
        when it leads the next possible token by `GREEDY_TIE_FRACTION` of the row's largest
        logit; otherwise every reply token a batch decoded is decoded again one at a time
        (`LlamaSequence.redecode_alone`) and the pick is made from those logits.
        """
        seq, ctx = self._seq, self._seq.context
        greedy = self._sampling.temperature <= 0
        sample, alone = True, False
        while True:
            if sample:
                if stream.stopped_before_sampling(cancel):
                    return
                if greedy and seq.batched_from is not None:
                    pick = stream.sampler.choose(ctx.handle, -1)
                    self._picked(pick)
                    if self._trusted(pick):
                        stream.sampler.accept(pick.token)
                        token = pick.token
                    else:
                        self._redecode_alone()
                        token = ctx.sample(stream.sampler)
                elif greedy and stream.sampler.plain_greedy:
                    # Read straight from the logits: cheaper than the sampler chain (the
                    # whole vocabulary as candidates), and the policy learns how often the
                    # model hesitates.
                    pick = stream.sampler.choose(ctx.handle, -1)
                    self._picked(pick)
                    stream.sampler.accept(pick.token)
                    token = pick.token
                else:
                    token = ctx.sample(stream.sampler)
                yield from self._emit(stream, token)
                if stream.reason is not None:
                    return
            pending = seq.transcript.tokens[-1]
            draft = [] if alone else self._draft(stream)
            if not draft:
                if alone:
                    self._redecode_alone()
                    alone = False
                started = time.perf_counter()
                seq.step(pending)
                self._timed(1, started)
                if self._policy is not None:
                    self._policy.stepped()
                sample = True
                continue
            started = time.perf_counter()
            seq.verify([pending, *draft])
            self._timed(len(draft) + 1, started)
            if self._policy is not None:
                self._policy.verified()
            kept, rejected, untrusted = 1, False, False
            for i in range(len(draft) + 1):
                if stream.stopped_before_sampling(cancel):
                    break
                if greedy:
                    pick = stream.sampler.choose(ctx.handle, i)
                    if not self._trusted(pick):
                        untrusted = True  # counted when picked again, after a 1-token step
                        break
                    self._picked(pick)
                    stream.sampler.accept(pick.token)
                    token = pick.token
                else:
                    token = stream.sampler.sample(ctx.handle, i)
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
            if untrusted:
                # Row i follows the batch's token i: that token is decoded again, alone.
                kept, alone = kept - 1, True
            self.drafts.add(self._drafter.name if self._drafter else "", len(draft), accepted)
            if self._policy is not None:
                # A close call ends the draft's use like a rejection does (and costs more).
                self._policy.score(accepted, rejected or untrusted)
            started = time.perf_counter()
            seq.settle(kept)
            if 0 < kept < len(draft) + 1 and (self._seq.model.is_hybrid or kept == 1):
                # decoded again
                self._timed(kept, started)
            if stream.reason is not None:
                return
            # The token sampled last (or the one to decode alone) waits to be decoded.
            sample = False

    def _trusted(self, pick: Pick) -> bool:
        """Whether a greedy pick from batch-made logits is the one a 1-token step makes."""
        return pick.lead >= GREEDY_TIE_FRACTION * pick.scale

    def _picked(self, pick: Pick) -> None:
        """Tell the policy whether a greedy pick was close (were it made from batch rows)."""
        if self._policy is not None:
            self._policy.picked(not self._trusted(pick))

    def _redecode_alone(self) -> None:
        """Decode this reply's batch-made tokens again one at a time (a close greedy call)."""
        started = time.perf_counter()
        n = self._seq.redecode_alone()
        if n:
            self.drafts.redecoded += n
            self.drafts.fallbacks += 1
            self._timed(1, started, n)
            if self._policy is not None:
                self._policy.redecoded(n)

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
        drafter, policy, t = self._drafter, self._policy, self._seq.transcript
        if drafter is None or policy is None:
            return []
        if self._sampling.temperature <= 0 and not policy.greedy_drafting:
            return []  # see DraftPolicy.greedy_drafting
        room = min(
            self._settings.max_tokens - stream.completion,  # tokens the reply may still take
            self._limit - len(t.tokens),  # positions left in the context
            self._seq.context.n_batch - 1,  # one batch holds the pending token and the draft
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

    def _timed(self, n_tokens: int, started: float, calls: int = 1) -> None:
        """Tell the policy how long a decode call of `n_tokens` took (`calls` of them
        since `started`)."""
        if self._policy is not None:
            elapsed = (time.perf_counter() - started) / calls
            for _ in range(calls):
                self._policy.timed(n_tokens, elapsed)


class ReplyStream:
    """What one reply has produced so far: tokens, text, parsed events and why it ended."""

    def __init__(
        self,
        sequence: LlamaSequence,
        tools: Sequence[ToolSchema],
        settings: GenerationSettings,
        *,
        starts_in_reasoning: bool,
        limit: int,
        sampler_for: Callable[[bool, int], Sampler],
        dialect: ToolCallDialect = XML,
    ) -> None:
        self._t = sequence.transcript
        self._model = sequence.model
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
        self._t.tokens.append(token)
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
