"""The context's sequence 0 and the token transcript it holds, kept in step while decoding."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from frogdesk.engine.llama.conversation.transcript import TokenTranscript
from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.errors import DecodeError
from frogdesk.engine.llama.load.model import LlamaModel


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
        self.on_prefill: Callable[[int, int], None] | None = None
        """Hears (tokens decoded, tokens to decode) before and after each batch of a prefill."""

    def catch_up(self, cancel: threading.Event | None = None) -> int:
        """Decode every transcript token not yet evaluated, capturing turn boundaries on the way.

        Returns the number of tokens decoded (fewer when `cancel` was set).
        """
        t = self.transcript
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
            n = self.context.decode(
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
                    boundary.state = self.context.snapshot()
                    t.drop_old_snapshots(self.max_snapshots)
        return decoded

    def _between_batches(self, done: int, total: int, cancel: threading.Event | None) -> bool:
        """Report a prefill's progress; False stops it (cancelled)."""
        if self.on_prefill is not None:
            self.on_prefill(done, total)
        return not (cancel is not None and cancel.is_set())

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
        are what a batch of just those tokens would have made. One kept token is decoded
        again alone: a batch's row is not what a 1-token step makes, and the schedule says
        each entry was one decode call of its tokens. A recurrent state cannot drop a tail:
        it goes back to where the batch started and decodes the kept tokens again in one
        call. Either way the state is exactly that of a run which decoded the kept tokens
        with the batch shapes the schedule records, never having seen the rejected ones.
        `kept` may be 0 (the batch is undone).
        """
        t = self.transcript
        start, batch = t.n_past, self._verifying
        if not 0 <= kept <= len(batch) or t.tokens[start : start + kept] != batch[:kept]:
            raise ValueError("the kept tokens are not the transcript's next ones")
        self._verifying = []
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
        self._checkpoint = b""
        if kept:
            t.schedule.append((start, kept))
        t.n_past += kept
