"""One conversation as tokens on one decode target: the only writer of its transcript.

It plans each request (which turn to go back to, what to append), decodes what is not yet
evaluated, takes sampled tokens in, verifies and settles drafts, and records replies.

Invariant: the target holds exactly `transcript.tokens[:transcript.n_past]`.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from frogdesk.engine.chat import Message, ToolSchema
from frogdesk.engine.errors import TemplateError
from frogdesk.engine.llama.conversation.segments import KeptReply, render_first, render_with_raw
from frogdesk.engine.llama.conversation.transcript import TokenTranscript
from frogdesk.engine.llama.decode.target import DecodeTarget
from frogdesk.engine.llama.errors import DecodeError
from frogdesk.engine.llama.load.model import LlamaModel
from frogdesk.engine.template import ChatTemplate


@dataclass(frozen=True)
class OpeningState:
    """The whole sequence state on passing the shared opening, with what made it."""

    tokens: tuple[int, ...]
    schedule: tuple[tuple[int, int], ...]
    data: bytes


@dataclass(frozen=True)
class Plan:
    """What a request changes: where the transcript is cut and what is appended."""

    keep_messages: int
    keep_pos: int
    starts_in_reasoning: bool
    history: list[int]
    prompt: list[int]
    messages: tuple[Message, ...]
    key: str
    opening: int = 0
    """Where the shared opening (system prompt and tools) ends in a plan rendered from the
    first message (0: none, or the plan keeps it already)."""

    @property
    def prompt_len(self) -> int:
        return self.keep_pos + len(self.history) + len(self.prompt)

    @property
    def tokens(self) -> list[int]:
        """Every token of the prompt (the kept ones are the transcript's own)."""
        return [*self.history, *self.prompt]


class Conversation:
    """The token transcript of one conversation and the target that has evaluated it."""

    def __init__(
        self,
        model: LlamaModel,
        target: DecodeTarget,
        template: ChatTemplate,
        closing: str,
        *,
        max_snapshots: int,
    ) -> None:
        self.model = model
        self.target = target
        self.template = template
        self.closing = closing
        """What the template writes after a reply's text (`reply_closing`)."""
        self.max_snapshots = max_snapshots
        self._t = TokenTranscript()
        self._verifying: list[int] = []
        self._checkpoint = b""
        self.on_prefill: Callable[[int, int], None] | None = None
        """Hears (tokens decoded, tokens to decode) before and after each batch of a prefill."""
        self.keep_opening = False
        """Capture the whole sequence state on passing the shared opening (`opening_state`)."""
        self.opening_state: OpeningState | None = None
        """The state captured there, for a file other conversations on this model start from."""
        self._openings: dict[str, list[int]] = {}

    @property
    def transcript(self) -> TokenTranscript:
        """What the conversation holds; read it, never write it (this object does)."""
        return self._t

    @property
    def verifying(self) -> tuple[int, ...]:
        """The batch `verify` decoded and `settle` has not yet settled (empty between them)."""
        return tuple(self._verifying)

    # Planning -------------------------------------------------------------------

    def plan(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        *,
        enable_thinking: bool,
        generation_prompt: bool,
        fresh: bool = False,
    ) -> Plan:
        """The cheapest way to hold `messages`: the newest turn kept that can be returned to.

        `fresh` renders them whole, as for an empty transcript.
        """
        t = self._t
        key = json.dumps([list(tools), enable_thinking], sort_keys=True, default=str)
        k = t.common_prefix(messages) if t.context_key == key and not fresh else 0
        options = [(k, t.covered)] if k == len(t.messages) and k > 0 else []
        options += [(b.n_messages, b.pos) for b in reversed(t.boundaries) if b.n_messages <= k]
        for n, pos in [*options, (0, 0)]:
            if n > 0 and not self._feasible(pos):
                continue
            if n > 0 and any(b.opening and b.pos == pos for b in t.boundaries):
                after = self._after_opening(pos, messages, tools, key, enable_thinking,
                                            generation_prompt)  # fmt: skip
                if after is None:
                    continue
                return after
            try:
                chunks = render_with_raw(self.template, messages, tools, start=n,
                                         closing=self.closing, enable_thinking=enable_thinking,
                                         generation_prompt=generation_prompt)  # fmt: skip
            except TemplateError:
                if n == 0:
                    raise
                continue
            history = self._tokenize_pieces(chunks.pieces, first=n == 0)
            prompt = self.model.tokenize(chunks.generation_prompt)
            opening = 0
            if n == 0:
                shared = self._opening(messages, tools, key, enable_thinking)
                if 0 < len(shared) < len(history) and history[: len(shared)] == shared:
                    opening = len(shared)
            return Plan(n, pos, chunks.starts_in_reasoning, history, prompt, tuple(messages),
                        key, opening)  # fmt: skip
        raise AssertionError("unreachable: the full render is always an option")

    def _after_opening(
        self,
        pos: int,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        key: str,
        enable_thinking: bool,
        generation_prompt: bool,
    ) -> Plan | None:
        """A plan that keeps the shared opening the transcript holds and renders the rest.

        The rest is cut from the whole conversation's own render, not rendered on its own:
        a template may render the first user message differently after a system prompt.
        """
        whole = self.plan(messages, tools, enable_thinking=enable_thinking,
                          generation_prompt=generation_prompt, fresh=True)  # fmt: skip
        if whole.opening != pos or whole.history[:pos] != self._t.tokens[:pos]:
            return None
        return Plan(1, pos, whole.starts_in_reasoning, whole.history[pos:], whole.prompt,
                    whole.messages, key)  # fmt: skip

    def opening_tokens(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema], *, enable_thinking: bool
    ) -> list[int]:
        """The tokens of the opening `messages` share with every conversation on this model
        (their system prompt and the tools), or [] when their render does not begin with it."""
        plan = self.plan(messages, tools, enable_thinking=enable_thinking,
                         generation_prompt=False, fresh=True)  # fmt: skip
        return plan.history[: plan.opening]

    def _opening(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        key: str,
        enable_thinking: bool,
    ) -> list[int]:
        """The system message and the tools rendered alone, tokenized as a first piece."""
        if len(messages) < 2 or messages[0].role != "system":
            return []
        system = messages[0]
        memo = json.dumps([key, system.content], default=str)
        if memo not in self._openings:
            try:
                alone = render_first(self.template, [system], tools,
                                     enable_thinking=enable_thinking,
                                     generation_prompt=False).history  # fmt: skip
            except TemplateError:
                alone = ""
            self._openings.clear()  # one system prompt at a time is the usual case
            self._openings[memo] = self._tokenize_first(alone) if alone else []
        return self._openings[memo]

    def _feasible(self, pos: int) -> bool:
        t = self._t
        if pos >= t.n_past or pos == 0 or not self.model.is_hybrid:
            return True
        return any(b.pos == pos and b.captured and b.state for b in t.boundaries)

    def apply(self, plan: Plan) -> None:
        """Cut the transcript (and the target) back to the plan's turn and append the rest."""
        t, target = self._t, self.target
        if plan.keep_pos == 0:
            if t.n_past > 0:
                target.clear()
            t.reset()
        else:
            if plan.keep_pos < t.n_past:
                point = next(b for b in t.boundaries if b.pos == plan.keep_pos)
                ok = (
                    target.restore(point.state, point.pos)
                    if point.state
                    else target.trim(point.pos)
                )
                if not ok:
                    self.forget()
                    raise DecodeError("could not return to an earlier turn; context cleared")
                t.n_past = plan.keep_pos
            t.cut(plan.keep_pos, plan.keep_messages)
        t.tokens.extend(plan.history)
        if plan.opening:
            t.add_boundary(1, plan.keep_pos + plan.opening, opening=True)
        t.messages.extend(plan.messages[plan.keep_messages :])
        t.covered = len(t.tokens)
        t.add_boundary(len(t.messages), t.covered)
        t.tokens.extend(plan.prompt)
        t.context_key = plan.key

    def count_tokens(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> int:
        """Tokens of the whole prompt, generation prompt included (raw replies as generated)."""
        chunks = render_with_raw(self.template, messages, tools, start=0, closing=self.closing,
                                 enable_thinking=True)  # fmt: skip
        pieces = [*chunks.pieces[:-1], f"{chunks.pieces[-1]}{chunks.generation_prompt}"]
        return len(self._tokenize_pieces(pieces, first=True))

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

    # Whole-conversation changes ---------------------------------------------------

    def forget(self) -> None:
        """Clear the target and the transcript."""
        self.target.clear()
        self._t.reset()

    def copied(self) -> TokenTranscript:
        """A copy of the transcript, for a target whose cells were copied from this one."""
        return copy.deepcopy(self._t)

    def adopt(self, transcript: TokenTranscript) -> None:
        """Hold `transcript` (the target's cells must hold its evaluated tokens already)."""
        self._t = transcript

    def loaded(self, n_past: int, schedule: Sequence[tuple[int, int]]) -> None:
        """The target was given a saved state of the first `n_past` planned tokens, decoded
        in the calls `schedule` lists; boundaries count as a prefill that passed them."""
        t = self._t
        t.n_past = n_past
        t.schedule = list(schedule)
        hybrid = self.model.is_hybrid
        for boundary in t.boundaries:
            boundary.captured = boundary.pos == n_past or (not hybrid and boundary.pos < n_past)
            if hybrid and boundary.opening and boundary.pos == n_past:
                boundary.state = self.target.snapshot()  # a later conversation returns here

    # Decoding ---------------------------------------------------------------------

    def catch_up(self, cancel: threading.Event | None = None) -> int:
        """Decode every transcript token not yet evaluated, capturing turn boundaries on the way.

        Returns the number of tokens decoded (fewer when `cancel` was set).
        """
        t = self._t
        decoded = 0
        first, total = t.n_past, len(t.tokens) - t.n_past
        heard = self.on_prefill
        if heard is not None and total > 0:
            heard(0, total)
        while t.n_past < len(t.tokens):
            if cancel is not None and cancel.is_set():
                break
            pending = t.pending_boundaries(len(t.tokens))
            stop = pending[0].pos if pending else len(t.tokens)
            start = t.n_past
            n = self.target.decode(
                t.tokens[start:stop],
                start,
                between_chunks=lambda done: self._between_batches(
                    t.n_past + done - first, total, cancel
                ),
            )
            t.n_past += n
            decoded += n
            t.schedule.append((start, n))
            if heard is not None:
                heard(t.n_past - first, total)
            if pending and t.n_past == pending[0].pos:
                boundary = pending[0]
                boundary.captured = True
                if self.model.is_hybrid:
                    boundary.state = self.target.snapshot()
                    t.drop_old_snapshots(self.max_snapshots)
                if boundary.opening and self.keep_opening:
                    self.keep_opening = False
                    self.opening_state = OpeningState(
                        tuple(t.tokens[: t.n_past]), tuple(t.schedule), self.target.save_sequence()
                    )
        return decoded

    def _between_batches(self, done: int, total: int, cancel: threading.Event | None) -> bool:
        """Report a prefill's progress; False stops it (cancelled)."""
        if self.on_prefill is not None:
            self.on_prefill(done, total)
        return not (cancel is not None and cancel.is_set())

    def take(self, token: int) -> None:
        """A sampled token joins the transcript (decoded by the next `step` or `verify`)."""
        self._t.tokens.append(token)

    def step(self, token: int) -> None:
        """Decode one sampled token (already taken in) for the next logits."""
        t = self._t
        self.target.decode_one(token, t.n_past)
        t.schedule.append((t.n_past, 1))
        t.n_past += 1

    def verify(self, tokens: Sequence[int]) -> None:
        """Decode the newest sampled token and a draft after it in one batch, logits per row.

        `tokens[0]` is the transcript's last token; the rest are only proposed. Row i's
        logits (`Sampler.sample(ctx, i)`) follow `tokens[: i + 1]`. `settle` must follow.
        """
        t = self._t
        if t.n_past != len(t.tokens) - 1 or t.tokens[-1] != tokens[0]:
            raise ValueError("a draft is verified right after the newest sampled token")
        # A recurrent state cannot drop a rejected tail: keep what to go back to.
        self._checkpoint = self.target.snapshot() if self.model.is_hybrid else b""
        self._verifying = list(tokens)
        self.target.decode_rows(self._verifying, t.n_past)

    def settle(self, kept: int) -> None:
        """Keep the first `kept` verified tokens (now the transcript's next ones), forget the rest.

        A transformer drops the rejected tail from its cache: a batch's rows do not depend on
        the rows after them (bench/verify_rounding.py checks it), so two or more kept tokens
        are what a batch of just those tokens would have made. One kept token is decoded
        again alone: a batch's row is not what a 1-token step makes, and the schedule says
        each entry was one decode call of its tokens. A recurrent state cannot drop a tail:
        it goes back to where the batch started and decodes the kept tokens again in one
        call. Either way the state is exactly that of a run which decoded the kept tokens
        with the batch shapes the schedule records, never having seen the rejected ones.
        `kept` may be 0 (the batch is undone).
        """
        t, target = self._t, self.target
        start, batch = t.n_past, self._verifying
        if not 0 <= kept <= len(batch) or t.tokens[start : start + kept] != batch[:kept]:
            raise ValueError("the kept tokens are not the transcript's next ones")
        self._verifying = []
        if kept < len(batch):
            if self.model.is_hybrid:
                ok = target.restore(self._checkpoint, start)
                if ok and kept:
                    target.decode(batch[:kept], start)
            elif kept == 1:
                ok = target.trim(start)
                if ok:
                    target.decode(batch[:1], start)
            else:
                ok = target.trim(start + kept)
            if not ok:
                raise DecodeError(f"could not drop a rejected draft at position {start}")
        self._checkpoint = b""
        if kept:
            t.schedule.append((start, kept))
        t.n_past += kept

    def record(self, reply: Message, eog_piece: str) -> None:
        """Keep a reply as a message of the transcript, closed as the template closes it.

        Replies cut by the token cap are kept too: when the loop sends them back they match.
        """
        t = self._t
        closing = self.closing
        glue = closing[len(eog_piece) :] if eog_piece and closing.startswith(eog_piece) else closing
        t.tokens.extend(self.model.tokenize(glue) if glue else [])
        t.messages.append(reply)
        t.covered = len(t.tokens)
        t.add_boundary(len(t.messages), t.covered)
