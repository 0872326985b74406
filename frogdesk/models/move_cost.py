"""The cost of moving a session to another quant or model: tokens to re-read and the time it takes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from frogdesk.config import Settings
from frogdesk.models.gguf_info import GgufInfo, inspect_gguf
from frogdesk.models.model_warnings import ModelFacts, ModelWarning, warnings_for
from frogdesk.models.resolve import resolve_local
from frogdesk.models.spec import parse_filename, parse_spec
from frogdesk.paths import AppPaths
from frogdesk.system import thread_count

CPU_FLOPS_PER_CORE = 40e9
"""Assumed sustained prefill throughput of one CPU core (FLOP/s) when nothing was measured."""


@dataclass(frozen=True)
class SwitchCost:
    """What switching costs, announced before it happens."""

    tokens: int
    """Tokens of the conversation the new model must evaluate from scratch."""
    est_seconds: float
    tokens_per_second: float
    measured: bool
    """The rate comes from a measured prefill rather than a guess from the model's size."""

    def describe(self) -> str:
        """One line for the user."""
        how = "measured" if self.measured else "estimated"
        return (
            f"switching re-reads {self.tokens:,} tokens: about {self.est_seconds:.0f} s "
            f"at {self.tokens_per_second:,.0f} tokens/s ({how})"
        )


def guess_prefill_rate(info: GgufInfo, threads: int = 0) -> float:
    """Prefill tokens per second on the CPU from the parameter count (about 2 FLOP per weight)."""
    cores = thread_count(threads)
    flops_per_token = 2.0 * max(info.parameters, 1)
    return cores * CPU_FLOPS_PER_CORE / flops_per_token


def switch_cost(
    messages_tokens: int,
    model_info: GgufInfo,
    prefill_tokens_per_second: float | None = None,
    threads: int = 0,
) -> SwitchCost:
    """The tokens to re-read and the estimated time, from a measured rate when one is given."""
    if messages_tokens < 0:
        raise ValueError("messages_tokens must be >= 0")
    measured = prefill_tokens_per_second is not None and prefill_tokens_per_second > 0
    rate = prefill_tokens_per_second if measured else guess_prefill_rate(model_info, threads)
    assert rate is not None
    return SwitchCost(messages_tokens, messages_tokens / rate, rate, measured)


@dataclass(frozen=True)
class SwitchPlan:
    """Everything to announce before a session moves to another model: file, cost, warnings."""

    spec: str
    path: Path
    info: GgufInfo
    cost: SwitchCost
    warnings: tuple[ModelWarning, ...]


def plan_switch(
    spec: str,
    settings: Settings,
    messages_tokens: int,
    prefill_tokens_per_second: float | None = None,
    paths: AppPaths | None = None,
) -> SwitchPlan:
    """Resolve the new model on disk, inspect it, and price re-reading the conversation on it."""
    path = resolve_local(spec, settings, paths)
    info = inspect_gguf(path)
    parsed = parse_spec(spec, settings.aliases)
    name = parse_filename(path.name)
    assert name is not None  # resolve_local only returns .gguf files
    return SwitchPlan(
        spec=spec,
        path=path,
        info=info,
        cost=switch_cost(messages_tokens, info, prefill_tokens_per_second, settings.threads),
        warnings=tuple(warnings_for(ModelFacts.of(name, parsed.repo, info), settings.acknowledged)),
    )
