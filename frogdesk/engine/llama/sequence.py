"""The context's sequence 0 and the token transcript it holds, kept in step while decoding."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from frogdesk.engine.llama.context import DecodeError, LlamaContext
from frogdesk.engine.llama.model import LlamaModel
from frogdesk.engine.llama.transcript import TokenTranscript


class LlamaSequence:
    """Decodes what the transcript holds beyond what the context has evaluated.

    Invariant: the context holds exactly `transcript.tokens[:transcript.n_past]`.
    """

    def __init__(
        self,
        model: LlamaModel,
        context: LlamaContext,
        transcript: TokenTranscript,
        *,
        max_snapshots: int,
    ) -> None:
        self.model = model
        self.context = context
        self.transcript = transcript
        self.max_snapshots = max_snapshots
        self._verifying: list[int] = []
        self._checkpoint = b""
        self.batched_from: int | None = None
        """The first position of this reply that a verification batch decoded (None: every
        reply token so far was decoded alone, as without drafting)."""
        self._clean_state = b""
        """The recurrent state at `batched_from` (hybrid models)."""
        self.alone_before_next = False
        """Whether the next `catch_up` first decodes again alone the batch-made tokens it
        keeps (after a greedy reply, which must leave what decoding without drafting does)."""

    def catch_up(self, cancel: threading.Event | None = None) -> int:
        """Decode every transcript token not yet evaluated, capturing turn boundaries on the way.

        Returns the number of tokens decoded (fewer when `cancel` was set).
        """
        t = self.transcript
        decoded = 0
        start = self.batched_from
        if self.alone_before_next and start is not None and start < t.n_past:
            decoded += self.redecode_alone()
        self.alone_before_next = False
        self.batched_from, self._clean_state = None, b""
        while t.n_past < len(t.tokens):
            if cancel is not None and cancel.is_set():
                break
            pending = t.pending_boundaries(len(t.tokens))
            stop = pending[0].pos if pending else len(t.tokens)
            start = t.n_past
            n = self.context.decode(
                t.tokens[start:stop],
                start,
                between_chunks=lambda _done: not (cancel is not None and cancel.is_set()),
            )
            t.n_past += n
            decoded += n
            t.schedule.append((start, n))
            if pending and t.n_past == pending[0].pos:
                boundary = pending[0]
                boundary.captured = True
                if self.model.is_hybrid:
                    boundary.state = self.context.snapshot()
                    t.drop_old_snapshots(self.max_snapshots)
        return decoded

    def step(self, token: int) -> None:
        """Decode one sampled token (already appended to the transcript) for the next logits."""
        t = self.transcript
        self.context.decode_one(token, t.n_past)
        t.schedule.append((t.n_past, 1))
        t.n_past += 1

    def verify(self, tokens: Sequence[int]) -> None:
        """Decode the newest sampled token and a draft after it in one batch, logits per row.

        `tokens[0]` is the transcript's last token; the rest are only proposed. Row i's
        logits (`Sampler.sample(ctx, i)`) follow `tokens[: i + 1]`. `settle` must follow.
        """
        t = self.transcript
        if t.n_past != len(t.tokens) - 1 or t.tokens[-1] != tokens[0]:
            raise ValueError("a draft is verified right after the newest sampled token")
        # A recurrent state cannot drop a rejected tail: keep what to go back to.
        self._checkpoint = self.context.snapshot() if self.model.is_hybrid else b""
        self._verifying = list(tokens)
        self.context.decode_rows(self._verifying, t.n_past)

    def settle(self, kept: int) -> None:
        """Keep the first `kept` verified tokens (now the transcript's next ones), forget the rest.

        A transformer drops the rejected tail from its cache: a batch's rows do not depend on
        the rows after them (bench/verify_rounding.py checks it), so two or more kept tokens
        are what a batch of just those tokens would have made. One kept token is not: a
        1-token step rounds differently from a batch's row, so it is decoded again alone, as
        without drafting. A recurrent state cannot drop a tail: it goes back to where the
        batch started and decodes the kept tokens again in one call. Either way the state is
        exactly that of a run which never saw the rejected tokens, and the schedule says how
        it was made. `kept` may be 0 (the batch is undone).
        """
        t = self.transcript
        start, batch = t.n_past, self._verifying
        if not 0 <= kept <= len(batch) or t.tokens[start : start + kept] != batch[:kept]:
            raise ValueError("the kept tokens are not the transcript's next ones")
        self._verifying = []
        rebatched = kept > 1
        if kept < len(batch):
            if self.model.is_hybrid:
                ok = self.context.restore(self._checkpoint, start)
                if ok and kept:
                    self.context.decode(batch[:kept], start)
            elif kept == 1:
                ok = self.context.trim(start)
                if ok:
                    self.context.decode(batch[:1], start)
            else:
                ok = self.context.trim(start + kept)
            if not ok:
                raise DecodeError(f"could not drop a rejected draft at position {start}")
        else:
            rebatched = True
        if rebatched and self.batched_from is None:
            self.batched_from, self._clean_state = start, self._checkpoint
        self._checkpoint = b""
        if kept:
            t.schedule.append((start, kept))
        t.n_past += kept

    def redecode_alone(self) -> int:
        """Decode again, one token at a time, every token of this reply a verification
        batch decoded, so the context holds what decoding without drafting makes (llama.cpp
        rounds a multi-token batch differently from a 1-token step). The last token's logits
        are then ready to sample. Returns the number of tokens decoded again.
        """
        start, t = self.batched_from, self.transcript
        if start is None:
            return 0
        end = t.n_past
        if self.model.is_hybrid:
            ok = self.context.restore(self._clean_state, start)
        else:
            ok = self.context.trim(start)
        if not ok:
            raise DecodeError(f"could not go back to position {start}")
        t.n_past = start
        t.schedule = [(s, n) for s, n in t.schedule if s + n <= start]
        self.batched_from, self._clean_state = None, b""
        for pos in range(start, end):
            self.context.decode_one(t.tokens[pos], pos)
            t.schedule.append((pos, 1))
            t.n_past = pos + 1
        return end - start
