"""What a conversation decodes on: one llama.cpp sequence, alone or in a shared context."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from frogdesk.engine.llama.decode.sampling import Pick, Sampler
    from frogdesk.engine.llama.load.model import LlamaModel


class DecodeTarget(Protocol):
    """One sequence's cells (KV cache and recurrent state) and the logits of its last decode.

    `LlamaContext` is a context of its own (sequence 0); `SequenceContext` is one sequence
    of a context several conversations share, decoded in common batches. Positions are the
    sequence's own, from 0. The conversation that decodes on a target is the only writer
    of what it holds.
    """

    model: LlamaModel
    n_ctx: int
    """Positions one sequence may hold."""
    n_batch: int
    """Tokens one decode call takes at most."""

    @property
    def handle(self) -> Any:
        """The `llama_context *` the sequence lives in (for low-level calls)."""
        ...

    @property
    def can_verify(self) -> bool:
        """Whether `decode_rows` works here (a draft needs a row of logits per token)."""
        ...

    def decode(
        self,
        tokens: Sequence[int],
        start: int,
        *,
        between_chunks: Callable[[int], bool] | None = None,
    ) -> int:
        """Decode `tokens` at positions start.., logits for the last one; tokens decoded.

        `between_chunks(done)` runs between batches; returning False stops early.
        """
        ...

    def decode_one(self, token: int, pos: int) -> None:
        """Decode one generated token at `pos`, with logits."""
        ...

    def decode_rows(self, tokens: Sequence[int], start: int) -> None:
        """Decode `tokens` (one batch) at positions start.., with logits for every row."""
        ...

    def sample(self, sampler: Sampler, row: int = -1) -> int:
        """Sample (and accept) the next token from this sequence's row `row` of the last batch."""
        ...

    def choose(self, sampler: Sampler, row: int = -1) -> Pick:
        """The sampler's pick from this sequence's row `row`, not yet accepted."""
        ...

    def logits(self) -> list[float]:
        """A copy of the logits after this sequence's last decoded token."""
        ...

    def clear(self) -> None:
        """Forget every position of the sequence."""
        ...

    def trim(self, pos: int) -> bool:
        """Drop positions >= pos; False when the memory cannot (a recurrent state)."""
        ...

    def snapshot(self) -> bytes:
        """The recurrent part of the sequence's state (empty for a transformer)."""
        ...

    def restore(self, data: bytes, pos: int) -> bool:
        """Restore a `snapshot` taken at `pos` tokens, then drop the cache from `pos` on."""
        ...

    def held_positions(self) -> tuple[int, int]:
        """The lowest and highest position the sequence's memory holds ((-1, -1): none).

        A recurrent cell holds only its newest position, so a hybrid's lowest is that one.
        """
        ...

    def save_sequence(self) -> bytes:
        """The sequence's whole state (KV cache and recurrent state), for `load_sequence`."""
        ...

    def load_sequence(self, data: bytes) -> bool:
        """Replace the sequence's state with `save_sequence` bytes; False when refused."""
        ...

    def close(self) -> None:
        """Free what this target owns."""
        ...
