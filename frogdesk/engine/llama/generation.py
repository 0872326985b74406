"""One reply on the llama backend: prefill the suffix, sample, stream parsed events."""

from __future__ import annotations

import codecs
import threading
import time
from collections.abc import Iterator, Sequence

from frogdesk.engine.llama.context import DecodeError
from frogdesk.engine.llama.sampling import GrammarUse, Sampler, resolve
from frogdesk.engine.llama.sequence import LlamaSequence
from frogdesk.engine.toolcall.grammar import CALL_TRIGGER, tool_call_grammar, trigger_pattern
from frogdesk.engine.toolcall.parser import QwenXmlToolParser
from frogdesk.engine.types import (
    EngineEvent,
    Finished,
    FinishReason,
    GenerationSettings,
    Message,
    Reply,
    ToolSchema,
    Usage,
)

THINK_CLOSE = "</think>"


class ReplyRun:
    """Generates one reply; afterwards `recorded` is the reply as a message if it ended cleanly."""

    def __init__(
        self,
        sequence: LlamaSequence,
        tools: Sequence[ToolSchema],
        settings: GenerationSettings,
        starts_in_reasoning: bool,
        limit: int,
    ) -> None:
        self._seq = sequence
        self._tools = tools
        self._settings = settings
        self._starts_in_reasoning = starts_in_reasoning
        self._limit = limit
        self._sampling = resolve(settings, sequence.model.sampling_defaults())
        self._call_token = sequence.model.single_token(CALL_TRIGGER)
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
            grammar = GrammarUse(tool_call_grammar(self._tools, leading_newlines=True), lazy=False)
        else:
            tokens = (self._call_token,) if self._call_token is not None else ()
            # A pattern is matched against the whole reply each token: only for content.
            patterns = () if tokens and in_reasoning else (trigger_pattern(),)
            grammar = GrammarUse(tool_call_grammar(self._tools), True, tokens, patterns)
        return Sampler(model, self._sampling, grammar=grammar, seed_offset=seed_offset)

    def events(self, cancel: threading.Event | None) -> Iterator[EngineEvent]:
        """Prefill what is new, then stream the reply; always ends with `Finished`."""
        b, t = self._seq, self._seq.transcript
        started = time.perf_counter()
        reused, prompt_len = t.n_past, len(t.tokens)
        try:
            evaluated = b.catch_up(cancel)
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
        reply, raw, error, first = Reply(), list[str](), "", 0.0
        sampled_from = len(t.tokens)
        reason: FinishReason = "length"
        parser = QwenXmlToolParser(self._tools, starts_in_reasoning=self._starts_in_reasoning)
        in_reasoning, saw_call, tail = self._starts_in_reasoning, False, ""
        sampler = self._sampler(in_reasoning, 0)
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        completion = 0
        try:
            while True:
                if completion >= self._settings.max_tokens:
                    reason = "length"
                    break
                if cancel is not None and cancel.is_set():
                    reason = "cancelled"
                    break
                token = sampler.sample(b.context.handle)
                first = first or time.perf_counter()
                t.tokens.append(token)
                completion += 1
                if b.model.is_eog(token):
                    self.ended_on_eog = b.model.piece(token).decode("utf-8", "replace")
                    reason = "stop"
                    break
                text = decoder.decode(b.model.piece(token))
                if text:
                    raw.append(text)
                    for event in parser.feed(text):
                        reply.add(event)
                        yield event
                    window = tail + text
                    saw_call = saw_call or CALL_TRIGGER in window
                    if in_reasoning and not saw_call and THINK_CLOSE in window:
                        in_reasoning = False
                        sampler.close()
                        sampler = self._sampler(False, completion)
                    tail = window[-16:]
                if completion >= self._settings.max_tokens:
                    reason = "length"
                    break
                if len(t.tokens) >= self._limit:
                    reason = "max_context_len"
                    break
                b.step(token)
        except DecodeError as exc:
            reason, error = "error", str(exc)
        finally:
            sampler.close()
        tail_text = decoder.decode(b"", final=True)
        if tail_text:
            raw.append(tail_text)
        for event in [*parser.feed(tail_text), *parser.finish()]:
            reply.add(event)
            yield event
        if reason == "stop" and reply.tool_calls:
            reason = "tool_calls"
        done = time.perf_counter()
        yield Usage(
            completion_tokens=completion,
            decode_seconds=(done - first) if first else 0.0,
            ttft_seconds=(first - started) if first else 0.0,
            **usage,  # type: ignore[arg-type]
        )
        final = reason
        if final in ("stop", "tool_calls", "length") and completion > 0:
            self.recorded = Message(
                role="assistant",
                content=reply.content,
                reasoning=reply.reasoning,
                tool_calls=tuple(reply.tool_calls),
            )
        sampled = t.tokens[sampled_from : sampled_from + completion]
        if sampled and self.ended_on_eog:
            sampled = sampled[:-1]
        yield Finished(final, error=error, raw_text="".join(raw), raw_tokens=tuple(sampled))
