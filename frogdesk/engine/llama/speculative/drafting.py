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
PROBE_CYCLES = 4
"""Drafting cycles timed before their realized gain is judged (and between two judgements)."""
PAUSE_FIRST = 32
"""Plain steps drafting stops for the first time its realized gain fell below 1."""
PAUSE_MAX = 2048
"""The longest stop: each stop after a probe that did not pay doubles, up to this."""
PLAIN_DECAY = 0.9
"""Weight of the past in the running time of a plain cycle (per plain cycle)."""
PROBE_AFTER = 64
"""Proposals left unverified in a row, while they are being right, before one is verified
anyway: the batch cost that kept them back is measured again."""
PROBE_MAX = 1024
"""The most proposals between two such probes: each probe after which drafting still does
not pay doubles the wait, up to this (where verifying never pays, probes cost little)."""
PROBE_ACCEPTANCE = 0.8
"""Acceptance from which proposals left unverified count as being right."""
SLOWER_BY = 1.25
"""A batch timed faster than its running figure sets the figure to at most this much above it."""


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
    pauses: int = 0
    """Times drafting was stopped in this reply because its measured gain fell below 1."""

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

    Acceptance is a running average over everything drafted, so after a long copy it is
    near 1 and says little about the first token of the next proposal, made where the
    text has stopped copying (prose after an Edit, a new line after a copied one): there
    a long draft rejected at once costs as many single steps as its batch. So the length
    verified is also held to a reach, as TCP's slow start holds its sends: a draft
    rejected leaves it at what the draft got right (at least 1), and a proposal that
    came true whole, verified or not, widens it to twice itself, at least as far as the
    proposal reached. Copying keeps it wide; text that no longer repeats keeps it at
    the short drafts that cost little.

    A batch's figure can only be too high by noise (a busy moment makes a call slower,
    never faster), so a faster timing brings it down at once, and a slower one moves it by
    the running average. And a figure too high to ever draft at would never be timed
    again: after `PROBE_AFTER` proposals in a row left unverified while they keep being
    right, one is verified anyway (the first batch of a size is slow while llama.cpp
    allocates for it; one such timing could otherwise stop drafting for the session),
    and each probe after which drafting still does not pay doubles the wait.

    Whatever the model says, the time drafting actually takes is checked too: every cycle
    of the decode loop (propose, decode, sample, emit) is timed, and when a few drafting
    cycles together made tokens more slowly than plain steps do, drafting stops for a
    while (`PAUSE_FIRST` plain steps, doubling after each probe that still does not pay,
    up to `PAUSE_MAX`). That catches what the cost model misses: a machine whose load
    changes between the measurements, a drafter slower than its figures, sampling and
    parsing per verified row, a cost measured at another context length. The policy is
    kept for the session, so a stop outlasts the reply.
    """

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
        self._plain_cycle = 0.0
        """Running seconds of a plain cycle of the decode loop (one token, no draft)."""
        self._window_tokens = 0
        self._window_seconds = 0.0
        self._window_cycles = 0
        """Drafting cycles since the last judgement: their tokens, seconds and count."""
        self._pause_next = PAUSE_FIRST
        self.paused = 0
        """Plain steps left before drafting is tried again (0: not stopped)."""
        self.realized: float | None = None
        """The last judged gain: tokens per second of drafting cycles over plain ones."""
        self.pauses = 0
        """Times drafting was stopped (the session's count)."""
        self.reach = max_draft
        """The most drafted tokens verified next: narrowed by a rejection, widened by a
        proposal that came true whole."""
        self._unverified = 0
        """Proposals left unverified in a row while acceptance was high."""
        self._probe_after = PROBE_AFTER
        """Unverified proposals before the next probe (doubling while probes do not pay)."""

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
            self.reach = max(1, accepted)
        else:
            self.reach = min(self.max_draft, max(2 * self.reach, accepted))

    def cycle(self, drafted: int, tokens: int, seconds: float) -> None:
        """One cycle of the decode loop took `seconds` and emitted `tokens` tokens; it
        verified `drafted` drafted tokens (0: a plain step). Drafting cycles are judged
        against plain ones by `PROBE_CYCLES`: a gain below 1 stops drafting for a while."""
        if drafted <= 0:
            old = self._plain_cycle
            mixed = old * PLAIN_DECAY + seconds * (1 - PLAIN_DECAY)
            self._plain_cycle = mixed if old else seconds
            if self.paused:
                self.paused -= 1
            return
        self._window_tokens += tokens
        self._window_seconds += seconds
        self._window_cycles += 1
        if self._window_cycles < PROBE_CYCLES or not self._plain_cycle:
            return
        if self._window_seconds <= 0:
            return
        self.realized = self._window_tokens / self._window_seconds * self._plain_cycle
        self._window_tokens, self._window_seconds, self._window_cycles = 0, 0.0, 0
        if self.realized < 1.0:
            self.paused = self._pause_next
            self._pause_next = min(2 * self._pause_next, PAUSE_MAX)
            self.pauses += 1
        else:
            self._pause_next = PAUSE_FIRST

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
        if old is None:
            self._ratios[n_tokens] = ratio
        else:
            self._ratios[n_tokens] = min(old * DECAY + ratio * (1 - DECAY), ratio * SLOWER_BY)

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
        return self.expected_tokens(k) / cost

    def length(self, available: int) -> int:
        """How many of `available` proposed tokens to verify now (0: take a plain step)."""
        if self.paused:
            return 0
        best, best_gain = 0, 1.0
        longest = min(available, self.max_draft, self.reach)
        for k in range(1, longest + 1):
            g = self.gain(k)
            if g > best_gain:
                best, best_gain = k, g
        if best:
            self._unverified, self._probe_after = 0, PROBE_AFTER
            return best
        if self.acceptance < PROBE_ACCEPTANCE:
            self._unverified = 0
            return 0
        self._unverified += 1
        if self._unverified < self._probe_after:
            return 0
        self._unverified = 0
        self._probe_after = min(2 * self._probe_after, PROBE_MAX)
        return longest  # a probe: its batch is timed again
