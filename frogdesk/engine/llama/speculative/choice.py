"""Choosing among several drafters by each one's recent acceptance (or none, when none pays).

`DrafterChoice` is both the drafter and the policy of a reply: it scores every proposal of
every drafter against the tokens that were sampled after it, asks the drafter that has
been right most often lately (skipping one whose drafts would not pay, but trying it again
now and then so a change in the text can bring it back), and then decides the length to
verify with that drafter's own acceptance and the measured cost of a batch, including
the time the drafter itself takes per proposed token (the MTP head runs a decoder block
for each).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from frogdesk.engine.llama.speculative.drafting import MAX_DRAFT, Drafter, DraftPolicy

RETRY_EVERY = 16
"""A drafter left out because it did not pay is asked again after this many steps."""


@dataclass
class _Pending:
    """A proposal waiting for the tokens sampled after it."""

    drafter: str
    at: int
    tokens: list[int]


class DrafterChoice(DraftPolicy):
    """A Drafter and a DraftPolicy at once: a `Drafting` holds it as both.

    A drafter with a `max_draft` attribute is never asked for more tokens than that.
    """

    def __init__(
        self,
        drafters: Sequence[Drafter],
        *,
        max_draft: int = MAX_DRAFT,
        rollback_redecodes: bool = False,
    ) -> None:
        super().__init__(max_draft=max_draft, rollback_redecodes=rollback_redecodes)
        self.drafters = list(drafters)
        self.name = ""
        """The drafter whose proposal was returned last (what the reply's stats count)."""
        self._scores = {d.name: DraftPolicy() for d in self.drafters}
        self._seconds_per_token = {d.name: 0.0 for d in self.drafters}
        self._skipped = {d.name: 0 for d in self.drafters}
        self._pending: list[_Pending] = []

    # Acceptance per drafter -------------------------------------------------------

    def acceptance_of(self, drafter: str) -> float:
        """The running acceptance of one drafter's proposals."""
        return self._scores[drafter].acceptance

    @property
    def acceptance(self) -> float:
        """The acceptance of the drafter chosen last (what the length is decided with)."""
        score = self._scores.get(self.name)
        return score.acceptance if score is not None else super().acceptance

    def _settle(self, tokens: Sequence[int]) -> None:
        """Score the proposals whose outcome the tokens now show."""
        waiting = []
        for p in self._pending:
            if p.at > len(tokens):  # the tokens were cut back: no outcome
                continue
            seen = tokens[p.at : p.at + len(p.tokens)]
            hits = 0
            while hits < len(seen) and seen[hits] == p.tokens[hits]:
                hits += 1
            if hits < len(seen):
                self._scores[p.drafter].score(hits, True)
            elif len(seen) == len(p.tokens):
                self._scores[p.drafter].score(hits, False)
            else:
                waiting.append(p)
                continue
        self._pending = waiting[-len(self.drafters) :]

    # Choosing -----------------------------------------------------------------------

    def _extra_cost(self, k: int) -> float:
        """The chosen drafter's time for `k` proposed tokens, in single decode steps."""
        one = self._seconds.get(1)
        per_token = self._seconds_per_token.get(self.name, 0.0)
        return k * per_token / one if one else 0.0

    def gain(self, k: int) -> float:
        """Tokens per single-step time with `k` drafted tokens, the drafting itself included."""
        g = super().gain(k)
        extra = self._extra_cost(k)
        if k <= 0 or extra <= 0 or g <= 0:
            return g
        expected = self.expected_tokens(k)
        return expected / (expected / g + extra)

    def propose(self, tokens: Sequence[int], limit: int) -> list[int]:
        """A proposal from the drafter most likely to be right now ([] when none pays)."""
        self._settle(tokens)
        if self.paused:
            # Drafting did not pay lately (see `DraftPolicy.cycle`): no drafter is run, not
            # even for a probe, until the stop is over.
            self.name = ""
            return []
        ranked = sorted(self.drafters, key=lambda d: self._scores[d.name].acceptance, reverse=True)
        for drafter in ranked:
            self.name = drafter.name
            want = self.length(min(limit, getattr(drafter, "max_draft", limit)))
            if want == 0:
                self._skipped[drafter.name] += 1
                if self._skipped[drafter.name] < RETRY_EVERY:
                    continue
                want = min(limit, 2)  # a probe keeps its acceptance current
            self._skipped[drafter.name] = 0
            started = time.perf_counter()
            proposal = drafter.propose(tokens, want)
            if proposal:
                seconds = (time.perf_counter() - started) / len(proposal)
                old = self._seconds_per_token[drafter.name]
                self._seconds_per_token[drafter.name] = (
                    seconds if old == 0.0 else 0.9 * old + 0.1 * seconds
                )
                self._pending.append(_Pending(drafter.name, len(tokens), list(proposal)))
                return proposal
        self.name = ""
        return []
