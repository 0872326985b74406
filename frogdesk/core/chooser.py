"""What the model chooser offers: the models on disk and a repo's quants, each with fit, warnings, drift."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from frogdesk.config import Settings
from frogdesk.models.catalog import CatalogRow, local_rows
from frogdesk.models.local import LocalModel, all_local
from frogdesk.models.system_memory import available_memory
from frogdesk.paths import AppPaths
from frogdesk.quantcheck.files import describe_result, latest_result


@dataclass(frozen=True)
class LocalChoices:
    """The complete models on disk (vision projectors left out), as rows the chooser shows."""

    models: list[LocalModel]
    rows: list[CatalogRow]
    measured: dict[str, str]
    """Each row's quant-check drift in words, by row label."""


def measured_drift(rows: list[CatalogRow], data_dir: Path) -> dict[str, str]:
    """The latest quant-check result of each row on disk, in words ("not measured" otherwise)."""
    return {
        row.label: describe_result(
            latest_result(data_dir, row.local_path) if row.local_path else None
        )
        for row in rows
    }


def local_choices(settings: Settings, paths: AppPaths) -> LocalChoices:
    """FrogDesk's imported files and the Hugging Face cache, judged for this machine."""
    models = [m for m in all_local(paths.models_dir) if m.complete and not m.name.mmproj]
    context = settings.context_size or settings.max_context_tokens
    rows = local_rows(
        models, available_memory(), context, settings.acknowledged, settings.kv_cache_type
    )
    return LocalChoices(models, rows, measured_drift(rows, paths.data_dir))
