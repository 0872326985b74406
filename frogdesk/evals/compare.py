"""Two runs side by side, task by task: what B gained and lost against A, and how sure that is.

The difference is B's Avg@K minus A's over the tasks both ran, with a 95% interval from a
paired bootstrap (tasks resampled with their two results together, 10,000 times, a fixed
seed so the same runs give the same interval), and McNemar's exact test on the tasks one
run solved and the other did not (two-sided binomial on the discordant pairs).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

from frogdesk.evals.results import RunResult

BOOTSTRAP_ROUNDS = 10_000
BOOTSTRAP_SEED = 20260101


@dataclass(frozen=True)
class Comparison:
    """The pairing of run A and run B."""

    a: str
    b: str
    paired: list[str]
    gained: list[str]
    """Solved by B, not by A."""
    lost: list[str]
    """Solved by A, not by B."""
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    a_avg: float = 0.0
    b_avg: float = 0.0
    difference: float = 0.0
    interval: tuple[float, float] = (0.0, 0.0)
    mcnemar_p: float = 1.0

    def to_json(self) -> dict[str, Any]:
        """`frogdesk eval compare --json`."""
        return {
            "a": self.a,
            "b": self.b,
            "paired_tasks": len(self.paired),
            "gained": self.gained,
            "lost": self.lost,
            "only_in_a": self.only_a,
            "only_in_b": self.only_b,
            "a_avg_at_k": round(self.a_avg, 4),
            "b_avg_at_k": round(self.b_avg, 4),
            "difference": round(self.difference, 4),
            "interval_95": [round(self.interval[0], 4), round(self.interval[1], 4)],
            "interval_method": f"paired bootstrap, {BOOTSTRAP_ROUNDS} resamples of tasks",
            "mcnemar_p": round(self.mcnemar_p, 4),
            "test": "McNemar exact (two-sided binomial on discordant tasks, Pass@K)",
        }


def mcnemar_exact(b_only: int, a_only: int) -> float:
    """Two-sided exact McNemar p-value for the discordant counts."""
    n = b_only + a_only
    if n == 0:
        return 1.0
    k = min(b_only, a_only)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / (1 << n)
    return min(1.0, 2 * tail)


def bootstrap_interval(diffs: list[float]) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles of the resampled mean difference."""
    if not diffs:
        return (0.0, 0.0)
    rng = random.Random(BOOTSTRAP_SEED)
    n = len(diffs)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(BOOTSTRAP_ROUNDS))
    return means[int(0.025 * BOOTSTRAP_ROUNDS)], means[int(0.975 * BOOTSTRAP_ROUNDS) - 1]


def compare(a: RunResult, b: RunResult) -> Comparison:
    """Pair the counted tasks the two runs share by name."""
    tasks_a = {t.task: t for t in a.tasks if t.counted}
    tasks_b = {t.task: t for t in b.tasks if t.counted}
    paired = sorted(set(tasks_a) & set(tasks_b))
    gained = [n for n in paired if tasks_b[n].solved and not tasks_a[n].solved]
    lost = [n for n in paired if tasks_a[n].solved and not tasks_b[n].solved]
    a_frac = [tasks_a[n].solve_fraction for n in paired]
    b_frac = [tasks_b[n].solve_fraction for n in paired]
    diffs = [y - x for x, y in zip(a_frac, b_frac, strict=True)]
    count = len(paired) or 1
    return Comparison(
        a.run_id,
        b.run_id,
        paired,
        gained,
        lost,
        sorted(set(tasks_a) - set(tasks_b)),
        sorted(set(tasks_b) - set(tasks_a)),
        sum(a_frac) / count,
        sum(b_frac) / count,
        sum(diffs) / count,
        bootstrap_interval(diffs),
        mcnemar_exact(len(gained), len(lost)),
    )


def describe(c: Comparison) -> list[str]:
    """The comparison in a few lines for the terminal."""
    low, high = c.interval
    lines = [
        f"A {c.a}  vs  B {c.b}: {len(c.paired)} tasks in both",
        f"Avg@K  A {c.a_avg:.1%}  B {c.b_avg:.1%}  B-A {c.difference:+.1%} "
        f"(95% paired bootstrap {low:+.1%} .. {high:+.1%})",
        f"gained by B ({len(c.gained)}): {', '.join(c.gained) or '-'}",
        f"lost by B ({len(c.lost)}): {', '.join(c.lost) or '-'}",
        f"McNemar exact p = {c.mcnemar_p:.3g}",
    ]
    if c.only_a or c.only_b:
        lines.append(f"not paired: only in A {c.only_a or '-'}, only in B {c.only_b or '-'}")
    return lines
