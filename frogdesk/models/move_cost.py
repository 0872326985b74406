"""The cost of moving a session to another quant or model: tokens to re-read and the time it takes."""

from __future__ import annotations

from frogdesk.config import Settings
from frogdesk.models.gguf_info import GgufInfo, inspect_gguf
from frogdesk.models.model_warnings import ModelFacts, warnings_for
from frogdesk.models.resolve import resolve_local
from frogdesk.models.spec import parse_filename, parse_spec
from frogdesk.models.switch_plan import SwitchCost, SwitchPlan
from frogdesk.paths import AppPaths
from frogdesk.system import thread_count

CPU_FLOPS_PER_CORE = 40e9
"""Assumed sustained prefill throughput of one CPU core (FLOP/s) when nothing was measured."""


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
        cost=switch_cost(messages_tokens, info, prefill_tokens_per_second, settings.engine.threads),
        warnings=tuple(
            warnings_for(ModelFacts.of(name, parsed.repo, info), settings.tui.acknowledged)
        ),
    )
