"""Drafters and when drafting pays: recent acceptance against the measured cost of a batch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

MAX_DRAFT = 16
"""The most drafted tokens verified in one batch."""
PRIOR_ACCEPTANCE = 0.5
"""Acceptance assumed before any draft was scored."""
DECAY = 0.9
"""Weight of the past in the running acceptance and cost figures (per scored draft token)."""
CLOSE_DECAY = 0.95
"""Weight of the past in the running share of greedy picks too close to call (per pick)."""
CLOSE_LIMIT = 0.03
"""Above this running share of close greedy picks nothing is drafted (greedy replies are
drafted only when `DraftPolicy.greedy_drafting` asks for it). A close call decodes again
every token since the reply's first batch, so a draft pays only if no close call follows
it soon; where the model keeps hesitating (SmolLM2 making up the numbers of lines it
repeats: 19 close picks in 300 tokens, spread to the end) every drafted stretch is
decoded twice."""
REDECODE_FORGET = 0.99
"""Per plain step, how much of the re-decoding charge is kept while nothing is drafted (so
drafting is tried again once the text repeats, after a stretch where it did not pay)."""


class Drafter(Protocol):
    """Proposes the tokens that may follow a token sequence (cheaply; the model verifies)."""

    name: str

    def propose(self, tokens: Sequence[int], limit: int) -> list[int]:
        """Up to `limit` tokens that may follow `tokens` ([] when it has no guess)."""
        ...


@dataclass
class DraftStats:
    """What drafting did in one reply: tokens proposed for verification and tokens accepted."""

    drafted: int = 0
    accepted: int = 0
    by_drafter: dict[str, list[int]] = field(default_factory=dict)
    """drafter name -> [drafted, accepted]."""
    fallbacks: int = 0
    """Greedy picks too close to call on batch-made logits (each decoded the reply's
    batch-made tokens again, one at a time)."""
    redecoded: int = 0
    """Tokens decoded again one at a time for those picks."""

    def add(self, drafter: str, drafted: int, accepted: int) -> None:
        """Count one verified draft."""
        self.drafted += drafted
        self.accepted += accepted
        counts = self.by_drafter.setdefault(drafter, [0, 0])
        counts[0] += drafted
        counts[1] += accepted


class DraftPolicy:
    """Chooses how many drafted tokens to verify, from acceptance and the cost per batch size.

    Acceptance is scored for every proposal, verified or not: a proposal that is not
    verified is compared with the tokens sampled after it, so the estimate stays current
    while drafting is off and drafting comes back when the text starts repeating again.
    Costs are the wall time of decode calls by batch size, so the choice follows the
    hardware: on a compute-bound CPU a batch of 8 costs several single steps, on a
    bandwidth-bound one little more than one. A batch's time is kept relative to the
    single steps of the same stretch (a step at 3,000 tokens of context takes twice one at
    700 here, and batch sizes that stop paying are rarely measured again), so a figure
    measured deep in one reply still holds at the start of the next.
    """

    greedy_drafting = False
    """Whether greedy replies are drafted. They are not by default: a greedy reply must equal
    the one made without drafting, and llama.cpp rounds a batch row differently from a
    1-token step (bench/verify_rounding.py), so every token a batch made has to be decoded
    again alone once a pick is too close to call, or before a later turn reads the cache
    that holds it. Nearly every drafted token then costs its share of a batch and a whole
    step: more than decoding it alone, whatever the hardware. With SmolLM2 really copying code
    it had read (bench/speculative.py --greedy-drafting) greedy drafting ran at 0.75-0.77 of
    plain decoding. Sampled replies (temperature above 0, FrogDesk's default 0.6) follow
    the model's distribution through the batch rows and are drafted."""

    def __init__(self, *, max_draft: int = MAX_DRAFT, rollback_redecodes: bool = False) -> None:
        self.max_draft = max_draft
        self.rollback_redecodes = rollback_redecodes
        """Whether a rejected draft costs a second decode of the accepted part (hybrid models)."""
        self._hits = PRIOR_ACCEPTANCE
        self._trials = 1.0
        self._seconds: dict[int, float] = {}
        """Running seconds of a 1-token step (key 1)."""
        self._ratios: dict[int, float] = {}
        """Running time of a decode call by its tokens, over the running 1-token step."""
        self._redecoded = 0.0
        """Running tokens decoded again per verification batch (greedy close calls)."""
        self._close = 0.0
        """Running share of greedy picks too close to call."""

    @property
    def acceptance(self) -> float:
        """The running chance that a drafted token is accepted, given the ones before it were."""
        return self._hits / self._trials

    def score(self, accepted: int, rejected: bool) -> None:
        """Record a draft: `accepted` tokens matched, then one did not (`rejected`) or none was left."""
        for _ in range(accepted):
            self._hits = self._hits * DECAY + 1.0
            self._trials = self._trials * DECAY + 1.0
        if rejected:
            self._hits *= DECAY
            self._trials = self._trials * DECAY + 1.0

    def verified(self) -> None:
        """A verification batch ran (the re-decoding charge is an average per batch)."""
        self._redecoded *= DECAY

    def redecoded(self, n_tokens: int) -> None:
        """A greedy close call decoded `n_tokens` batch-made tokens again, one at a time."""
        self._redecoded += n_tokens * (1 - DECAY)

    def picked(self, close: bool) -> None:
        """A greedy pick was made; `close`: too close to call were it made from batch rows."""
        self._close = self._close * CLOSE_DECAY + (1 - CLOSE_DECAY) * close

    @property
    def close_share(self) -> float:
        """The running share of greedy picks too close to call."""
        return self._close

    def stepped(self) -> None:
        """A plain 1-token step ran: the re-decoding charge fades while nothing is drafted."""
        self._redecoded *= REDECODE_FORGET

    @property
    def redecode_charge(self) -> float:
        """Single steps of re-decoding each verification batch costs on average lately."""
        return self._redecoded

    def timed(self, n_tokens: int, seconds: float) -> None:
        """Record the wall time of one decode call of `n_tokens` tokens (a call of several
        before any single step was timed has nothing to be compared with: not recorded)."""
        if n_tokens <= 1:
            old = self._seconds.get(1)
            self._seconds[1] = seconds if old is None else old * DECAY + seconds * (1 - DECAY)
            return
        one = self._seconds.get(1)
        if not one:
            return
        ratio, old = seconds / one, self._ratios.get(n_tokens)
        self._ratios[n_tokens] = ratio if old is None else old * DECAY + ratio * (1 - DECAY)

    def cost(self, n_tokens: int) -> float:
        """Estimated seconds for a decode call of `n_tokens`, relative to a single step.

        Unmeasured sizes are interpolated linearly between measured ones; with nothing
        measured yet a batch is assumed to cost as much as its tokens would one by one
        beyond the first half (a cautious start).
        """
        if n_tokens <= 1:
            return 1.0
        ratios = self._ratios
        if not ratios:
            return 1.0 + 0.5 * (n_tokens - 1)
        if n_tokens in ratios:
            return ratios[n_tokens]
        known = {1: 1.0, **ratios}
        below = max(s for s in known if s < n_tokens)
        above = min((s for s in known if s > n_tokens), default=None)
        if above is None:
            slope = (known[below] - 1.0) / (below - 1) if below > 1 else 0.5
            return known[below] + slope * (n_tokens - below)
        lo, hi = known[below], known[above]
        return lo + (hi - lo) * (n_tokens - below) / (above - below)

    def expected_tokens(self, k: int) -> float:
        """Tokens one verification of `k` drafted tokens yields on average (the sampled one included)."""
        a = min(self.acceptance, 0.999)
        return (1.0 - a ** (k + 1)) / (1.0 - a)

    def gain(self, k: int) -> float:
        """Tokens per single-step time when verifying `k` drafted tokens (1.0 = no drafting)."""
        if k <= 0:
            return 1.0
        cost = self.cost(k + 1)
        a = min(self.acceptance, 0.999)
        if self.rollback_redecodes:
            # A rejection re-decodes the accepted part; charge the expected share of it.
            cost += (1.0 - a**k) * self.cost(max(1, round(self.expected_tokens(k))))
        else:
            # A draft rejected at once leaves one batch-made row, decoded again alone.
            cost += 1.0 - a
        # Greedy close calls decode batch-made tokens again one at a time: charge their share.
        cost += self._redecoded
        return self.expected_tokens(k) / cost

    def length(self, available: int) -> int:
        """How many of `available` proposed tokens to verify now (0: take a plain step)."""
        if self._close > CLOSE_LIMIT:
            return 0
        best, best_gain = 0, 1.0
        for k in range(1, min(available, self.max_draft) + 1):
            g = self.gain(k)
            if g > best_gain:
                best, best_gain = k, g
        return best
