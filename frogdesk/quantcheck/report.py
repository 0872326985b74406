"""What a quant check reports: its progress, each file's measurements and the whole report
(value types, no I/O)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class CheckProgress:
    """Where a running check is: which file and phase, positions or cases done, rate and ETA."""

    file: str
    phase: str
    done: int
    total: int
    rate: float
    eta_s: float | None


@dataclass(frozen=True)
class QuantResult:
    """One file's measurements against the reference."""

    file: str
    quant: str
    mean_kl: float
    p99_kl: float
    top1_agreement: float
    ppl: float
    ref_ppl: float
    tool_call_fidelity: float | None
    tool_call_cases: int
    tokens: int
    reference: str
    reference_quant: str
    corpus_version: str
    date: str
    tool_calls: dict[str, int] = field(default_factory=dict)
    """Of the cases where the reference calls a tool: this file's exact, recovered and lost calls."""
    cached: bool = False

    def to_json(self) -> dict[str, Any]:
        """The row of `models check --json`."""
        out = asdict(self)
        out.pop("cached")
        return out


@dataclass(frozen=True)
class CheckReport:
    """The reference used, the corpus version, and one result per file (the reference first)."""

    reference: str
    reference_quant: str
    corpus_version: str
    results: list[QuantResult]

    def to_json(self) -> dict[str, Any]:
        """The object `models check --json` prints."""
        return {
            "reference": self.reference,
            "reference_quant": self.reference_quant,
            "corpus_version": self.corpus_version,
            "results": [r.to_json() for r in self.results],
        }


ProgressFn = Callable[[CheckProgress], None]
