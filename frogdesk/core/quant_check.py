"""Measuring how far quants drift from a reference (`frogdesk models check`), with the
llama.cpp options the settings give."""

from __future__ import annotations

from pathlib import Path

from frogdesk.config import Settings
from frogdesk.paths import AppPaths
from frogdesk.quantcheck.check import CheckOptions, check_quants
from frogdesk.quantcheck.evaluate import EvalOptions
from frogdesk.quantcheck.files import choose_reference
from frogdesk.quantcheck.report import CheckReport, ProgressFn


def check_files(
    files: list[Path],
    reference: Path | None,
    settings: Settings,
    paths: AppPaths,
    *,
    tokens: int | None = None,
    cases: int | None = None,
    progress: ProgressFn | None = None,
    use_cache: bool = True,
) -> CheckReport:
    """Score each file against `reference` (default: the most precise quant of the same
    model among them and on disk), caching each result under the data folder.

    Raises CheckError when the files cannot be compared and CheckCancelled on a cancel
    (nothing is cached for the unfinished file)."""
    options = CheckOptions(
        tokens=tokens,
        cases=cases,
        eval=EvalOptions(
            threads=settings.engine.threads, gpu_layers=max(settings.engine.gpu_layers, -1)
        ),
    )
    chosen = reference if reference is not None else choose_reference(files)
    return check_quants(
        files, chosen, paths.data_dir, options, progress=progress, use_cache=use_cache
    )
