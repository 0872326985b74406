"""A drafter that proposes what followed the last few tokens the last time they occurred."""

from __future__ import annotations

from collections.abc import Sequence

NGRAM_SIZES = (4, 3, 2)
"""Suffix lengths looked up, longest first: a longer match predicts better."""


class NgramDrafter:
    """Looks the newest tokens up in the conversation's own tokens and proposes the continuation.

    An agent copies a lot (an Edit's `old_string` repeats lines it has read, a Write
    re-emits a file, paths and commands recur), so the token transcript itself is the
    draft model. The index maps every n-gram to where it last ended; it grows with the
    tokens and is rebuilt when they were cut (a new turn returned to an earlier point).
    """

    name = "ngram"

    def __init__(self, sizes: Sequence[int] = NGRAM_SIZES) -> None:
        self.sizes = tuple(sorted(sizes, reverse=True))
        self._index: dict[tuple[int, ...], int] = {}
        self._indexed = 0
        self._seen: list[int] = []
        """The tokens indexed so far (to notice a cut or a rewrite)."""

    def _sync(self, tokens: Sequence[int]) -> None:
        n = self._indexed
        if (
            n > len(tokens)
            or (n and tokens[n - 1] != self._seen[n - 1])
            or (n > 1 and tokens[n // 2] != self._seen[n // 2])
        ):
            self._index.clear()
            self._seen.clear()
            self._indexed = n = 0
        # The newest n-grams are left out: looking them up would find themselves.
        end = len(tokens) - 1
        self._seen.extend(tokens[n:end])
        for stop in range(max(n, 1), end + 1):
            for size in self.sizes:
                if stop >= size:
                    self._index[tuple(tokens[stop - size : stop])] = stop
        self._indexed = max(n, end)

    def propose(self, tokens: Sequence[int], limit: int) -> list[int]:
        """Up to `limit` tokens that followed the longest recent suffix match ([] if none)."""
        if limit <= 0 or len(tokens) < min(self.sizes) + 1:
            return []
        self._sync(tokens)
        for size in self.sizes:
            if len(tokens) < size:
                continue
            at = self._index.get(tuple(tokens[-size:]))
            if at is not None:
                return list(tokens[at : min(at + limit, len(tokens))])
        return []
