"""Model operations both faces share: the context a fit is judged at, measured drift, the
download progress line, loading a GGUF, and backends whose loads are watched."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from frogdesk.config import Settings
from frogdesk.engine.backends import make_backend
from frogdesk.engine.chat import Backend
from frogdesk.engine.kinds import kind_of
from frogdesk.engine.registry import watch_prefill
from frogdesk.models.catalog_row import CatalogRow
from frogdesk.models.local import check_loadable
from frogdesk.models.model_warnings import header_warnings
from frogdesk.models.progress import Progress
from frogdesk.models.resolve import check_spec, resolve_local
from frogdesk.quantcheck.files import latest_result
from frogdesk.sessions.factories import BackendFactory
from frogdesk.sessions.parts import default_backend, resolve_model_path
from frogdesk.sizes import human_bytes


def fit_context(settings: Settings, explicit: int | None = None) -> int:
    """The context size a fit is judged at: given, configured, or the largest budget."""
    return explicit or settings.engine.context_size or settings.loop.max_context_tokens


def drift_result(row: CatalogRow, data_dir: Path) -> dict[str, Any] | None:
    """The latest quant-check result of a row's file (None: not measured, or not on disk);
    the one reader of measured drift, for the chooser's words and `models --json` alike."""
    return latest_result(data_dir, row.local_path) if row.local_path else None


def progress_line(p: Progress) -> str:
    """Bytes, rate and time left of a download, in one line."""
    eta = f"{p.eta:.0f}s" if p.eta is not None else "?"
    done, total, rate = human_bytes(p.done), human_bytes(p.total), human_bytes(p.rate)
    return f"{p.file}: {done} / {total}  {rate}/s  ETA {eta}"


def model_file(spec: str, settings: Settings) -> Path:
    """The GGUF a session with model `spec` loads: a .gguf path as given, anything else (an
    alias, a Hub spec, the configured model when `spec` is empty) found on this machine.
    Raises ModelError saying how to get a model that is not here."""
    return resolve_model_path(spec, settings)


def local_file(spec: str, settings: Settings) -> Path:
    """The GGUF on disk that `spec` names, a path checked as a loadable GGUF; raises
    ModelError saying how to pull a model that is not here."""
    return resolve_local(spec, settings)


def refuse_unusable(spec: str, settings: Settings) -> None:
    """Refuse, without the network, a spec that can never load (a typo'd quant, a path with
    no model file there) with ModelError; a Hub spec not on disk passes (it can be pulled)."""
    check_spec(spec, settings)


def loadable_file(path: Path) -> Path:
    """`path`, when it is a GGUF FrogDesk may load (it exists, is a GGUF and is not a vision
    projector); else ModelError saying which."""
    return check_loadable(path)


def load_backend(
    settings: Settings, path: Path, progress: Callable[[float], None] | None = None
) -> Backend:
    """Load the GGUF at `path` on llama.cpp with the settings (blocking, seconds); `progress`
    hears the fraction loaded. A context cut to what the model was trained for, and GPU layers
    asked of a build that cannot offload, are said as notices (by `make_backend`, so a
    headless run says them too)."""
    return make_backend(settings, model_path=path, progress=progress)


def watched_backends(
    warn: Callable[[str], None],
    load_meter: Callable[[], Callable[[float], None]] | None = None,
    prefill: Callable[[int, int], None] | None = None,
) -> BackendFactory:
    """The default backends, each local model's loading told as it happens.

    Its honest warnings go to `warn` first, as `level: text [id]` lines, once per file,
    from its header (not the license notice, which is for where a model is chosen); its
    load fraction to a fresh `load_meter()`; each prompt prefill's progress (tokens
    decoded, tokens to decode) to `prefill`."""
    warned: set[Path] = set()

    def factory(record: Any, settings: Any, replies_done: int = 0) -> Backend:
        if not kind_of(record.backend).local_model:
            return default_backend(record, settings, replies_done)
        path = resolve_model_path(record.model, settings)
        if path not in warned:
            warned.add(path)
            for warning in header_warnings(path):
                if warning.level != "info":
                    warn(f"{warning.level}: {warning.text} [{warning.id}]")
        meter = load_meter() if load_meter is not None else None
        backend = default_backend(record, settings, replies_done, progress=meter)
        if prefill is not None:
            watch_prefill(backend, prefill)
        return backend

    return factory
