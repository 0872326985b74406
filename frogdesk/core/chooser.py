"""What the model chooser offers: the models on disk and a repo's quants, each with fit, warnings,
drift; and pulling a chosen quant. The first-run picker, the quant switch and `frogdesk models`
all list through here."""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, field
from pathlib import Path

from frogdesk.config import Settings
from frogdesk.core.last_model import remembered
from frogdesk.core.model_ops import drift_result, fit_context
from frogdesk.models.catalog import local_rows, repo_rows
from frogdesk.models.catalog_row import CatalogRow
from frogdesk.models.download import download_limits
from frogdesk.models.errors import ModelError
from frogdesk.models.hub import hub_token, list_repo, resolve_endpoint
from frogdesk.models.listing import RepoListing
from frogdesk.models.local import all_local, hf_cache_dir
from frogdesk.models.local_model import LocalModel
from frogdesk.models.migrate import migrate_repo
from frogdesk.models.progress import ProgressCallback
from frogdesk.models.pull import pull
from frogdesk.models.resolve import find_local
from frogdesk.models.retry import NO_RETRY, RetryPolicy
from frogdesk.models.spec import ModelSpec, parse_spec
from frogdesk.models.system_memory import available_memory
from frogdesk.paths import AppPaths
from frogdesk.quantcheck.files import describe_result


@dataclass(frozen=True)
class LocalChoices:
    """The complete models on disk (vision projectors left out), as rows the chooser shows."""

    models: list[LocalModel]
    rows: list[CatalogRow]
    measured: dict[str, str]
    """Each row's quant-check drift in words, by row label."""


@dataclass(frozen=True)
class HubChoices:
    """A repo's quants from the Hub (or its saved listing), as rows the chooser shows."""

    listing: RepoListing
    rows: list[CatalogRow]
    measured: dict[str, str]
    notes: list[str] = field(default_factory=list)
    """Names the listing refused, models moved out of the old folder: one line each."""


def drift_words(row: CatalogRow, data_dir: Path) -> str:
    """The latest quant-check result of a row's file in words ("not measured" otherwise)."""
    return describe_result(drift_result(row, data_dir))


def measured_drift(rows: list[CatalogRow], data_dir: Path) -> dict[str, str]:
    """The latest quant-check result of each row on disk, in words ("not measured" otherwise)."""
    return {row.label: drift_words(row, data_dir) for row in rows}


def local_choices(settings: Settings, paths: AppPaths) -> LocalChoices:
    """FrogDesk's imported files and the Hugging Face cache, judged for this machine, and the
    model last loaded here when it lies elsewhere (a path given once) and is still there."""
    models = [m for m in all_local(paths.models_dir) if m.complete and not m.name.mmproj]
    last = remembered(paths)
    if last is not None and last.present:
        known = {_same_file(m.path) for m in models}
        if _same_file(last.path) not in known:
            models.append(last.as_local())
    rows = local_rows(
        models,
        available_memory(),
        fit_context(settings),
        settings.tui.acknowledged,
        settings.engine.kv_cache_type,
    )
    return LocalChoices(models, rows, measured_drift(rows, paths.data_dir))


def _same_file(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path.absolute()


def disk_rows_beyond(rows: list[CatalogRow], local: LocalChoices) -> list[CatalogRow]:
    """The rows of `local` whose file none of `rows` already is (a repo's listing shows its
    own quants on disk; this adds the other repos' downloads, imported and remembered files)."""
    shown = {_same_file(r.local_path) for r in rows if r.local_path is not None}
    return [r for r in local.rows if r.local_path is None or _same_file(r.local_path) not in shown]


def repo_listing(
    spec: ModelSpec,
    settings: Settings,
    paths: AppPaths,
    *,
    endpoint: str | None = None,
    token: str | None = None,
    retry: RetryPolicy = NO_RETRY,
) -> tuple[RepoListing, list[str]]:
    """The repo's listing (the saved one when the Hub cannot be reached) and the lines to say
    about it: names refused as unsafe, models moved out of FrogDesk's old folder. The user's
    Hub token (HF_TOKEN or the saved login) is sent unless `token` is given."""
    listing = list_repo(
        spec.repo,
        endpoint=resolve_endpoint(endpoint, settings.hub.hf_endpoint),
        cache_dir=paths.cache_dir,
        revision=spec.revision,
        token=token if token is not None else hub_token(),
        retry=retry,
    )
    notes = list(listing.refused)
    if not listing.from_cache:
        notes += migrate_repo(listing, paths.models_dir, hf_cache_dir())
    return listing, notes


def hub_choices(
    spec: ModelSpec,
    settings: Settings,
    paths: AppPaths,
    *,
    endpoint: str | None = None,
    token: str | None = None,
    retry: RetryPolicy = NO_RETRY,
    context: int | None = None,
) -> HubChoices:
    """Every model of the repo, judged for this machine at `context` (default: the settings')."""
    listing, notes = repo_listing(
        spec, settings, paths, endpoint=endpoint, token=token, retry=retry
    )
    rows = repo_rows(
        listing,
        all_local(paths.models_dir),
        available_memory(),
        fit_context(settings, context),
        settings.tui.acknowledged,
        settings.engine.kv_cache_type,
    )
    return HubChoices(listing, rows, measured_drift(rows, paths.data_dir), notes)


def session_repo(model: str, settings: Settings, paths: AppPaths) -> str:
    """The Hub repo whose quants a session may switch to: its model's repo ("" when unknown).

    A spec names its repo; a path inside the Hugging Face cache belongs to the repo it was
    pulled from; any other file falls back to the configured model's repo.
    """
    for text in (model, settings.model):
        if not text:
            continue
        try:
            spec = parse_spec(text, settings.aliases)
        except ModelError:
            continue
        if spec.kind == "repo":
            return spec.repo
        if spec.path is not None:
            wanted = spec.path.absolute()
            for found in all_local(paths.models_dir):
                if found.repo and any(p.absolute() == wanted for p in found.parts):
                    return found.repo
    return ""


@dataclass(frozen=True)
class RemoteChoices:
    """What the quant switch offers beyond the disk: the repo's quants a pull would fetch."""

    rows: list[CatalogRow]
    """Quants of the repo not on disk (none when the Hub is unreachable)."""
    listing: RepoListing | None
    line: str
    """One line about the Hub: how many quants it offers, or why it offers none."""
    notes: list[str] = field(default_factory=list)

    @property
    def measured(self) -> dict[str, str]:
        """Measured drift by label: nothing is measured before a file is on disk."""
        return {row.label: "not measured" for row in self.rows}


def remote_choices(
    settings: Settings,
    paths: AppPaths,
    repo: str,
    *,
    endpoint: str | None = None,
    token: str | None = None,
    retry: RetryPolicy = NO_RETRY,
) -> RemoteChoices:
    """`repo`'s quants that are not on disk, when the Hub answers (labels carry the repo, as
    the rows of the models on disk do).

    A saved listing offers no downloads (the Hub did not answer); its reason is the line.
    """
    if not repo:
        return RemoteChoices([], None, "")
    try:
        chosen = hub_choices(
            parse_spec(repo, settings.aliases),
            settings,
            paths,
            endpoint=endpoint,
            token=token,
            retry=retry,
        )
    except ModelError as exc:
        return RemoteChoices([], None, f"The Hub is unreachable: {exc}")
    listing = chosen.listing
    if listing.from_cache:
        reason = listing.offline_reason or "offline"
        return RemoteChoices(
            [], listing, f"The Hub is unreachable ({reason}): models on disk only."
        )
    rows = [
        dataclasses.replace(row, label=f"{row.repo}/{row.label}")
        for row in chosen.rows
        if row.local_path is None and not row.name.mmproj
    ]
    line = f"{len(rows)} more quant(s) of {repo} on {listing.endpoint}; Enter downloads one."
    return RemoteChoices(rows, listing, line if rows else "", chosen.notes)


def pull_row(
    row: CatalogRow,
    listing: RepoListing,
    settings: Settings,
    *,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> Path:
    """Download (or resume) a listed model into the Hugging Face cache; the file to load.

    Raises DownloadCancelled when `cancel` is set (the partial file stays for a resume).
    """
    spec = parse_spec(f"{row.repo}:{row.name.quant}", settings.aliases)
    return pull_into_cache(spec, listing, settings, progress=progress, cancel=cancel)[0]


def pull_into_cache(
    spec: ModelSpec,
    listing: RepoListing,
    settings: Settings,
    *,
    token: str | None = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> list[Path]:
    """Download (or resume) the spec's files from the listing into the Hugging Face cache,
    each verified against the Hub's sha256, within the settings' download limits; the files,
    first part first. The user's Hub token is sent unless `token` is given.

    Raises DownloadCancelled when `cancel` is set (the partial file stays for a resume).
    """
    return pull(
        spec,
        listing,
        hf_cache_dir(),
        token=token if token is not None else hub_token(),
        progress=progress,
        cancel=cancel,
        limits=download_limits(settings.hub),
    )


def pull_missing(
    spec_text: str,
    settings: Settings,
    paths: AppPaths,
    *,
    token: str | None = None,
    retry: RetryPolicy = NO_RETRY,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> tuple[Path | None, list[str]]:
    """Pull the Hub quant a spec names when it is not on disk: (the file to load, lines to say).

    (None, []) when the spec is a path or its model is already on disk. With the Hub unreachable
    the saved listing cannot fetch anything: ModelError says why, in one line.
    """
    spec = parse_spec(spec_text, settings.aliases)
    if spec.kind != "repo" or find_local(spec, paths.models_dir) is not None:
        return None, []
    listing, notes = repo_listing(spec, settings, paths, token=token, retry=retry)
    if listing.from_cache:
        reason = listing.offline_reason or "offline"
        raise ModelError(f"{spec} is not on this machine and the Hub is unreachable ({reason})")
    files = pull_into_cache(spec, listing, settings, token=token, progress=progress, cancel=cancel)
    return files[0], notes
