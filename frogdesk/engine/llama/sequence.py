"""The context's sequence 0 and the token transcript it holds, kept in step while decoding."""

from __future__ import annotations

import threading

from frogdesk.engine.llama.context import LlamaContext
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

    def catch_up(self, cancel: threading.Event | None = None) -> int:
        """Decode every transcript token not yet evaluated, capturing turn boundaries on the way.

        Returns the number of tokens decoded (fewer when `cancel` was set).
        """
        t = self.transcript
        decoded = 0
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
