"""Memory for N attempts on one llama context: N KV caches and recurrent states, one model."""

from __future__ import annotations

from dataclasses import dataclass

from frogdesk.attempts.errors import AttemptsError
from frogdesk.config import DEFAULT_MAX_CONTEXT_TOKENS
from frogdesk.models.gguf_info import GgufInfo
from frogdesk.models.memory import (
    CONTEXT_PAD,
    CPU_UBATCH,
    HEADROOM,
    default_ubatch,
    estimate,
    largest_fitting,
)
from frogdesk.models.system_memory import MemoryAvailable


def attempts_bytes(
    info: GgufInfo,
    per_sequence: int,
    n: int,
    kv_type: str,
    flash: bool | None,
    ubatch: int = CPU_UBATCH,
) -> int:
    """Bytes of one model with `n` sequences of `per_sequence` tokens each (an estimate):
    the weights (with the copy llama.cpp repacks for the CPU) and compute once (batches of
    `ubatch` tokens), the cache, recurrent state and output of every sequence."""
    # attempts share one context without drafting: no MTP draft context
    one = estimate(info, per_sequence, kv_type, ubatch, flash, drafting=False)
    shared = one.weights + one.repack + one.compute
    return shared + n * (one.kv_cache + one.recurrent_state + one.output)


def largest_per_sequence(
    info: GgufInfo, memory: MemoryAvailable, n: int, kv_type: str, flash: bool | None, ceiling: int
) -> int:
    """The largest context per sequence (a multiple of 256, at most `ceiling`) for `n`
    sequences in RAM plus VRAM; 0 when not even 256 tokens fit."""
    budget = int((memory.ram_free + (memory.vram_free or 0)) * HEADROOM)
    top = min(ceiling or 262144, info.context_length or 262144)
    ubatch = default_ubatch(memory.has_gpu)  # with a GPU the plan offloads: its batches

    def fits(ctx: int) -> bool:
        return attempts_bytes(info, ctx, n, kv_type, flash, ubatch) <= budget

    return largest_fitting(top, fits)


@dataclass(frozen=True)
class AttemptsFit:
    """The context each of N attempts gets, and what would fit with fewer or more."""

    n: int
    per_sequence: int
    """Tokens of context per attempt (0 when N does not fit)."""
    table: tuple[tuple[int, int], ...]
    """(attempts, largest context per attempt) for 1..max(N, 4)."""

    def describe(self) -> str:
        """One line for the user before the attempts start."""
        others = ", ".join(f"{k}: {ctx:,}" for k, ctx in self.table)
        return (
            f"{self.n} attempts share one model: {self.per_sequence:,} tokens of context each "
            f"(largest per attempt that fits here, by attempts: {others})"
        )


def fit_attempts(
    info: GgufInfo,
    memory: MemoryAvailable,
    n: int,
    *,
    kv_type: str = "f16",
    flash: bool | None = None,
    wanted: int = 0,
    ceiling: int = DEFAULT_MAX_CONTEXT_TOKENS,
) -> AttemptsFit:
    """The context per attempt for `n` attempts: `wanted` when it fits (0 takes the largest,
    at most `ceiling`). Raises AttemptsError naming which N fits at which context."""
    table = tuple(
        (k, largest_per_sequence(info, memory, k, kv_type, flash, ceiling))
        for k in range(1, max(n, 4) + 1)
    )
    largest = dict(table)[n]
    per_sequence = min(wanted, largest) if wanted > 0 and wanted <= largest else largest
    if wanted > largest or per_sequence < CONTEXT_PAD:
        fitting = [f"{k} at {ctx:,} tokens each" for k, ctx in table if ctx >= CONTEXT_PAD]
        shown = "; ".join(fitting) or "not even one attempt fits"
        asked = f" with {wanted:,} tokens each" if wanted > 0 else ""
        raise AttemptsError(
            f"{n} attempts{asked} do not fit in this machine's memory ({shown}); "
            "ask for fewer attempts or a smaller context_size"
        )
    return AttemptsFit(n, per_sequence, table)
