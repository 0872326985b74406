"""Model operations both faces share: the context a fit is judged at, measured drift, the
download progress line, loading a GGUF."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from frogdesk.config import Settings
from frogdesk.engine.backends import make_backend
from frogdesk.engine.chat import Backend
from frogdesk.models.catalog_row import CatalogRow
from frogdesk.models.progress import Progress
from frogdesk.quantcheck.files import latest_result
from frogdesk.sizes import human_bytes


def fit_context(settings: Settings, explicit: int | None = None) -> int:
    """The context size a fit is judged at: given, configured, or the largest budget."""
    return explicit or settings.context_size or settings.max_context_tokens


def drift_result(row: CatalogRow, data_dir: Path) -> dict[str, Any] | None:
    """The latest quant-check result of a row's file (None: not measured, or not on disk);
    the one reader of measured drift, for the chooser's words and `models --json` alike."""
    return latest_result(data_dir, row.local_path) if row.local_path else None


def progress_line(p: Progress) -> str:
    """Bytes, rate and time left of a download, in one line."""
    eta = f"{p.eta:.0f}s" if p.eta is not None else "?"
    done, total, rate = human_bytes(p.done), human_bytes(p.total), human_bytes(p.rate)
    return f"{p.file}: {done} / {total}  {rate}/s  ETA {eta}"


def load_backend(
    settings: Settings, path: Path, progress: Callable[[float], None] | None = None
) -> Backend:
    """Load the GGUF at `path` on llama.cpp with the settings (blocking, seconds); `progress`
    hears the fraction loaded. A context cut to what the model was trained for, and GPU layers
    asked of a build that cannot offload, are said as notices (by `make_backend`, so a
    headless run says them too)."""
    return make_backend(settings, model_path=path, progress=progress)
