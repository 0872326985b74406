"""The quant check's arithmetic: compact distributions, KL against them, tool-call agreement."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from frogdesk.engine.chat import ToolCallError, ToolCallEvent
from frogdesk.engine.toolcall.parser import parse_reply
from frogdesk.engine.toolcall.scan import CALL_CLOSE, CALL_OPEN, FUNCTION_CLOSE

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int32]

_MIN_MASS = 1e-12
_CALL_RE = re.compile(r"\A\s*<tool_call>\s*<function=([A-Za-z_][\w.\-]*)>")
_DRIFTED_OPEN_RE = re.compile(r"\A\s*(?:<tool_call>\s*)?<function=([A-Za-z_][\w.\-]*)[>\n]")
CallOutcome = Literal["exact", "recovered", "lost"]


def rest_logp(top_logp: FloatArray) -> FloatArray:
    """Log of the probability mass outside the given top-k log-probs (per row)."""
    mass = 1.0 - np.exp(top_logp.astype(np.float64)).sum(axis=-1)
    out: FloatArray = np.log(np.maximum(mass, _MIN_MASS)).astype(np.float32)
    return out


def compact(logp: FloatArray, k: int) -> tuple[IntArray, FloatArray, FloatArray, IntArray]:
    """Top-k ids and log-probs (descending), the rest's log-mass and the argmax, per row."""
    k = min(k, logp.shape[-1])
    part = np.argpartition(-logp, k - 1, axis=-1)[:, :k]
    vals = np.take_along_axis(logp, part, axis=-1)
    order = np.argsort(-vals, axis=-1, kind="stable")
    ids = np.take_along_axis(part, order, axis=-1).astype(np.int32)
    top = np.take_along_axis(vals, order, axis=-1).astype(np.float32)
    return ids, top, rest_logp(top), np.argmax(logp, axis=-1).astype(np.int32)


def kl_to_compact(
    ref_ids: IntArray, ref_top: FloatArray, ref_rest: FloatArray, logq: FloatArray
) -> npt.NDArray[np.float64]:
    """KL(reference || quant) per row over the top-k tokens plus one bucket for the rest."""
    q_top = np.take_along_axis(logq, ref_ids.astype(np.int64), axis=-1).astype(np.float64)
    p_top = ref_top.astype(np.float64)
    kl = (np.exp(p_top) * (p_top - q_top)).sum(axis=-1)
    q_rest = rest_logp(q_top.astype(np.float32)).astype(np.float64)
    p_rest = ref_rest.astype(np.float64)
    has_rest = np.exp(p_rest) > _MIN_MASS
    kl += np.where(has_rest, np.exp(p_rest) * (p_rest - q_rest), 0.0)
    # The coarsened KL is non-negative; clip float noise so a model against itself reads 0.
    clipped: npt.NDArray[np.float64] = np.maximum(kl, 0.0)
    return clipped


def called_tool(continuation: str) -> str | None:
    """The tool a greedy continuation calls, or None when it does not start with a parseable call."""
    match = _CALL_RE.match(continuation)
    return match.group(1) if match else None


def tool_call_fidelity(reference: list[str], quant: list[str]) -> tuple[float | None, int]:
    """Share of cases where the reference calls a tool and the quant calls the same one; and n cases."""
    pairs = [(called_tool(r), called_tool(q)) for r, q in zip(reference, quant, strict=True)]
    counted = [(r, q) for r, q in pairs if r is not None]
    if not counted:
        return None, 0
    same = sum(1 for r, q in counted if q == r)
    return same / len(counted), len(counted)


def call_outcome(continuation: str, expected: str, tools: Sequence[Any]) -> CallOutcome:
    """How a greedy continuation calls `expected`: in the exact format, recovered, or not at all.

    A continuation stops at `</function>` (the check's stop string), so the `</tool_call>`
    it cut off is put back before parsing; one cut by the token cap is judged by its opening.
    """
    text = continuation
    if FUNCTION_CLOSE in text:
        if text.lstrip().startswith(CALL_OPEN):
            text += "\n" + CALL_CLOSE
        for event in parse_reply(text, tools, starts_in_reasoning=False):
            if isinstance(event, ToolCallEvent):
                if event.call.name != expected:
                    return "lost"
                return "recovered" if event.recovered else "exact"
            if isinstance(event, ToolCallError):
                return "lost"
        return "lost"
    if called_tool(continuation) == expected:
        return "exact"
    drifted = _DRIFTED_OPEN_RE.match(continuation)
    return "recovered" if drifted and drifted.group(1) == expected else "lost"


def tool_call_outcomes(
    reference: list[str], quant: list[str], tools: Sequence[Any]
) -> dict[str, int]:
    """Over the cases where the reference calls a tool: the quant's exact, recovered and lost calls."""
    counts = {"exact": 0, "recovered": 0, "lost": 0}
    for ref, got in zip(reference, quant, strict=True):
        expected = called_tool(ref)
        if expected is not None:
            counts[call_outcome(got, expected, tools)] += 1
    return counts


@dataclass
class MetricAccumulator:
    """Sums per-position statistics chunk by chunk, so no full distribution is kept."""

    kl: list[npt.NDArray[np.float64]] = field(default_factory=list)
    agree: int = 0
    nll: float = 0.0
    ref_nll: float = 0.0
    count: int = 0

    def add(
        self,
        logq: FloatArray,
        targets: IntArray,
        ref_ids: IntArray,
        ref_top: FloatArray,
        ref_rest: FloatArray,
        ref_argmax: IntArray,
        ref_target_logp: FloatArray,
    ) -> None:
        """Account for a chunk of positions scored by the quant."""
        self.kl.append(kl_to_compact(ref_ids, ref_top, ref_rest, logq))
        self.agree += int((np.argmax(logq, axis=-1) == ref_argmax).sum())
        picked = np.take_along_axis(logq, targets.astype(np.int64)[:, None], axis=-1)[:, 0]
        self.nll -= float(picked.astype(np.float64).sum())
        self.ref_nll -= float(ref_target_logp.astype(np.float64).sum())
        self.count += len(targets)

    def summary(self) -> dict[str, float]:
        """mean_kl, p99_kl, top1_agreement, ppl and ref_ppl over everything added."""
        if self.count == 0:
            raise ValueError("no positions were scored")
        kl = np.concatenate(self.kl)
        return {
            "mean_kl": float(kl.mean()),
            "p99_kl": float(np.percentile(kl, 99)),
            "top1_agreement": self.agree / self.count,
            "ppl": float(np.exp(self.nll / self.count)),
            "ref_ppl": float(np.exp(self.ref_nll / self.count)),
        }
