"""A drafter that proposes what followed the last few tokens where they occurred before."""

from __future__ import annotations

from collections.abc import Sequence

NGRAM_SIZES = (4, 3, 2)
"""Suffix lengths looked up, longest first: a longer match predicts better."""
CANDIDATES = 24
"""The most recent occurrences of an n-gram compared, per source."""
AGREEMENT = 48
"""How far back an occurrence's preceding tokens are compared with the newest ones."""
MAX_EXTRA = 200_000
"""Tokens of extra text kept (older extra text is forgotten past this)."""
_GAP = -1
"""Separates extra texts: no token has this id, so no match runs across two texts."""


class NgramDrafter:
    """Looks the newest tokens up in the conversation's own tokens and proposes the continuation.

    An agent copies a lot (an Edit's `old_string` repeats lines it has read, a Write
    re-emits a file, paths and commands recur), so the token transcript itself is the
    draft model. Code repeats itself too (every line of a table starts alike), so of the
    places where the newest n-gram occurred, the one whose preceding tokens agree longest
    with the newest ones is followed: while copying, that is the place being copied. When
    several places agree equally well (the model writes a line like the ones before it,
    each with its own number), `unambiguous` drafts only as far as they all continue
    alike and leaves the token where they part to the model: a verified row costs
    about half a decode step on a compute-bound CPU, and the batch's last row yields that
    token anyway.

    Besides the transcript, extra texts can be `remember`ed: text the model is likely to
    write that the transcript holds only in another form (a file read with numbered
    lines, which the model writes back without the numbers). The transcript's index maps
    every n-gram to where it ended; it grows with the tokens and is rebuilt when they were
    cut (a new turn returned to an earlier point).
    """

    name = "ngram"

    def __init__(self, sizes: Sequence[int] = NGRAM_SIZES, *, unambiguous: bool = False) -> None:
        self.sizes = tuple(sorted(sizes, reverse=True))
        self.unambiguous = unambiguous
        """Propose only as far as every best-agreeing occurrence continues alike (repeated
        lines that differ in a number: the number is left to the model)."""
        self._index: dict[tuple[int, ...], list[int]] = {}
        self._indexed = 0
        self._seen: list[int] = []
        """The tokens indexed so far (to notice a cut or a rewrite)."""
        self._extra: list[int] = []
        self._extra_index: dict[tuple[int, ...], list[int]] = {}

    def remember(self, tokens: Sequence[int]) -> None:
        """Add a text the model may copy from that is not in the transcript as it is."""
        if len(tokens) < min(self.sizes) + 1:
            return
        if len(self._extra) + len(tokens) > MAX_EXTRA:
            self._extra.clear()
            self._extra_index.clear()
        start = len(self._extra) + 1
        self._extra.append(_GAP)
        self._extra.extend(tokens)
        _index_range(self._extra_index, self._extra, start, len(self._extra), self.sizes)

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
        _index_range(self._index, tokens, max(n, 1), end, self.sizes)
        self._indexed = max(n, end)

    def propose(self, tokens: Sequence[int], limit: int) -> list[int]:
        """Up to `limit` tokens that followed the best match of the newest tokens ([] if none)."""
        if limit <= 0 or len(tokens) < min(self.sizes) + 1:
            return []
        self._sync(tokens)
        for size in self.sizes:
            if len(tokens) < size:
                continue
            key = tuple(tokens[-size:])
            best: list[tuple[Sequence[int], int]] = []
            best_agree = -1
            # Newest first, the transcript before extra text: ties go to what came last.
            for source, ends in (
                (tokens, self._index.get(key)),
                (self._extra, self._extra_index.get(key)),
            ):
                for at in reversed((ends or [])[-CANDIDATES:]):
                    agree = _agreement(source, at - size, tokens, len(tokens) - size)
                    if agree > best_agree:
                        best, best_agree = [(source, at)], agree
                    elif agree == best_agree:
                        best.append((source, at))
            if best:
                source, at = best[0]
                out = list(source[at : min(at + limit, len(source))])
                if _GAP in out:
                    out = out[: out.index(_GAP)]
                if self.unambiguous:
                    out = out[: _common(out, best[1:])]
                if out:
                    return out
        return []


def _index_range(
    index: dict[tuple[int, ...], list[int]],
    tokens: Sequence[int],
    first: int,
    end: int,
    sizes: Sequence[int],
) -> None:
    """Record every n-gram of `sizes` ending at positions first..end (exclusive ends)."""
    for stop in range(first, end + 1):
        for size in sizes:
            if stop >= size:
                gram = tuple(tokens[stop - size : stop])
                if _GAP in gram:
                    continue
                ends = index.setdefault(gram, [])
                ends.append(stop)
                if len(ends) > 4 * CANDIDATES:
                    del ends[: len(ends) - CANDIDATES]


def _common(draft: Sequence[int], others: Sequence[tuple[Sequence[int], int]]) -> int:
    """How many of `draft`'s tokens every other occurrence continues with too."""
    n = len(draft)
    for source, at in others:
        i = 0
        while i < n and at + i < len(source) and source[at + i] == draft[i]:
            i += 1
        n = i
    return n


def _agreement(source: Sequence[int], a: int, tokens: Sequence[int], b: int) -> int:
    """How many tokens before source[a] equal those before tokens[b] (at most AGREEMENT)."""
    n = 0
    while n < AGREEMENT and a - n > 0 and b - n > 0 and source[a - n - 1] == tokens[b - n - 1]:
        n += 1
    return n
