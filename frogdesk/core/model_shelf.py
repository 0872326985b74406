"""The models on this machine, as `frogdesk models` works on them: the rows on disk, pulling
a spec (planned first, so its warnings and size are said before a byte comes), what a file
is and how it would load here, removing and importing; and the license notice remembered."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frogdesk.config import Settings
from frogdesk.core.chooser import pull_into_cache, repo_listing
from frogdesk.core.model_ops import fit_context, local_file
from frogdesk.engine.backends import settings_options
from frogdesk.engine.dialect_info import dialect_line, tool_call_dialect
from frogdesk.models.catalog import local_rows
from frogdesk.models.catalog_row import CatalogRow
from frogdesk.models.gguf_info import GgufInfo, inspect_gguf
from frogdesk.models.listing import RepoListing
from frogdesk.models.local import all_local, hf_cache_dir, import_model
from frogdesk.models.memory import (
    Estimate,
    Plan,
    cpu_repack_types,
    drafts_with_mtp,
    largest_context,
    plan,
)
from frogdesk.models.model_warnings import ModelFacts, acknowledge, license_key, warnings_for
from frogdesk.models.progress import ProgressCallback
from frogdesk.models.pull import PullPlan, plan_pull
from frogdesk.models.remove import remove_model
from frogdesk.models.retry import NO_RETRY, RetryPolicy
from frogdesk.models.spec import ModelSpec, parse_filename, parse_spec
from frogdesk.models.system_memory import MemoryAvailable, available_memory
from frogdesk.models.warning import LICENSE_AMBIGUOUS, ModelWarning
from frogdesk.paths import AppPaths
from frogdesk.sizes import memory_size


def disk_rows(settings: Settings, paths: AppPaths, context: int) -> list[CatalogRow]:
    """Every model in FrogDesk's models folder and the Hugging Face cache, judged for this
    machine at `context` tokens."""
    return local_rows(
        all_local(paths.models_dir),
        available_memory(),
        context,
        settings.tui.acknowledged,
        settings.engine.kv_cache_type,
    )


def estimate_line(est: Estimate) -> str:
    """The memory estimate in binary units with every part of its total (empty parts left out)."""
    shown = ", ".join(
        f"{name} {memory_size(size)}"
        for name, size in est.parts
        if size or name in ("weights", "KV cache", "compute")
    )
    return f"{memory_size(est.total)} at {est.context:,} tokens: {shown}"


def remember_license_notice(
    settings: Settings, config_file: Path, warnings: list[ModelWarning], model: str
) -> None:
    """When `warnings` hold the license notice, record it as seen for `model` (in the config
    file and `settings`), so it is shown once per model."""
    if model and any(w.id == LICENSE_AMBIGUOUS for w in warnings):
        settings.tui.acknowledged = acknowledge(
            config_file, settings.tui.acknowledged, license_key(model)
        )


@dataclass(frozen=True)
class PlannedPull:
    """A spec's download, decided before a byte comes: which files, how big, where to."""

    spec: ModelSpec
    listing: RepoListing
    chosen: PullPlan
    cache: Path
    warnings: list[ModelWarning]
    notes: list[str] = field(default_factory=list)
    """Names the listing refused, models moved out of the old folder: one line each."""

    @property
    def label(self) -> str:
        """The model's name as the listing shows it."""
        return self.chosen.group.label

    @property
    def total_bytes(self) -> int:
        """The bytes of every part together."""
        return self.chosen.total_bytes

    def run(
        self,
        settings: Settings,
        *,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> list[Path]:
        """Download (or resume) every part, each verified against the Hub's sha256; the
        files, first part first. A cancel leaves the partial file for a resume."""
        return pull_into_cache(self.spec, self.listing, settings, progress=progress, cancel=cancel)


def plan_spec_pull(
    spec: ModelSpec,
    settings: Settings,
    paths: AppPaths,
    *,
    endpoint: str | None = None,
    retry: RetryPolicy = NO_RETRY,
) -> PlannedPull:
    """The download `spec` asks for, from the repo's listing, with the model's warnings."""
    listing, notes = repo_listing(spec, settings, paths, endpoint=endpoint, retry=retry)
    cache = hf_cache_dir()
    chosen = plan_pull(spec, listing, cache)
    facts = ModelFacts(chosen.group.name, spec.repo)
    warnings = warnings_for(facts, settings.tui.acknowledged)
    return PlannedPull(spec, listing, chosen, cache, warnings, notes)


@dataclass(frozen=True)
class ModelReport:
    """What a model file is and how it would load on this machine."""

    path: Path
    info: GgufInfo
    dialect: dict[str, Any] | None
    """The tool-call dialect its chat template teaches (`engine.dialect_info`; None: no
    template)."""
    plan: Plan
    largest_context: int
    memory: MemoryAvailable
    warnings: list[ModelWarning]
    license_model: str
    """The model its license notice is acknowledged for."""

    def dialect_line(self) -> str:
        """The dialect in words: its title and name, why it is refused, or no template."""
        return dialect_line(self.dialect)


def load_options(settings: Settings, info: GgufInfo) -> dict[str, Any]:
    """The llama.cpp options FrogDesk loads `info`'s file with, as the estimate assumes them.

    Raises BackendError for settings llama.cpp cannot make a context of."""
    options = settings_options(settings)
    return {
        "use_mmap": options.mmap_for(info.repackable_bytes, info.tensor_bytes),
        "flash_attn": options.flash_attn_for(info.recurrent_layers > 0),
        "kv_cache_type": options.kv_cache_type,
        "n_batch": options.n_batch,
        "n_ubatch": options.ubatch,
        "n_threads": options.threads,
        "cpu_repack_types": sorted(cpu_repack_types()),
        "mtp": drafts_with_mtp(info, options.speculative),
    }


def inspect_model(spec_text: str, settings: Settings, context: int | None = None) -> ModelReport:
    """The report on a local model (a path, or a spec already on disk) at `context` tokens
    (default: the settings'), cut to the model's own maximum. Raises ModelError for a spec
    not on this machine or a file that is no usable GGUF."""
    spec = parse_spec(spec_text, settings.aliases)
    path = spec.path if spec.kind == "path" and spec.path else local_file(spec_text, settings)
    info = inspect_gguf(path)
    memory = available_memory()
    wanted = fit_context(settings, context)
    at = min(wanted, info.context_length or wanted)
    drafting = settings.engine.speculative
    flash = settings.engine.flash_attn_choice
    chosen = plan(info, at, memory, settings.engine.kv_cache_type, flash, drafting=drafting)
    top = largest_context(info, memory, settings.engine.kv_cache_type, flash, drafting=drafting)
    name = parse_filename(path.name)
    assert name is not None
    facts = ModelFacts.of(name, spec.repo, info)
    return ModelReport(
        path=path,
        info=info,
        dialect=tool_call_dialect(path) if info.chat_template else None,
        plan=chosen,
        largest_context=top,
        memory=memory,
        warnings=warnings_for(facts, settings.tui.acknowledged),
        license_model=facts.license_model,
    )


def remove(spec_text: str, settings: Settings, paths: AppPaths) -> list[str]:
    """Remove a model from the Hugging Face cache or FrogDesk's own files; a line per removal."""
    return remove_model(parse_spec(spec_text, settings.aliases), paths.models_dir, hf_cache_dir())


def import_file(path: Path, paths: AppPaths, *, copy: bool = False) -> Path:
    """Make a local GGUF known to FrogDesk, linked (or copied); where it now is."""
    return import_model(path, paths.models_dir, copy=copy)
