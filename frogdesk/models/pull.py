"""Pulling one model (every part of it) from a Hub repo into FrogDesk's models dir."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from frogdesk.models.download import Expected, ProgressCallback, download
from frogdesk.models.hub import RepoListing, resolve_url
from frogdesk.models.spec import ModelGroup, ModelSpec, group_files, pick_group


@dataclass(frozen=True)
class PullPlan:
    """The files a pull will fetch, with their total size."""

    group: ModelGroup
    destinations: tuple[Path, ...]
    total_bytes: int


def repo_dir(models_dir: Path, repo: str) -> Path:
    """Where a repo's files go: models_dir/OWNER/NAME."""
    owner, name = repo.split("/", 1)
    return models_dir / owner / name


def plan_pull(spec: ModelSpec, listing: RepoListing, models_dir: Path) -> PullPlan:
    """Pick the spec's model in the listing (refusing vision projectors) and where its parts go."""
    group = pick_group(group_files(f.path for f in listing.files), spec.quant, spec.repo)
    root = repo_dir(models_dir, spec.repo)
    total = sum(listing.file(p).size for p in group.parts)
    return PullPlan(group, tuple(root / p for p in group.parts), total)


def pull(
    spec: ModelSpec,
    listing: RepoListing,
    models_dir: Path,
    *,
    token: str | None = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> list[Path]:
    """Download (or resume) every part of the spec's model; returns their verified paths."""
    plan = plan_pull(spec, listing, models_dir)
    out = []
    for part, dest in zip(plan.group.parts, plan.destinations, strict=True):
        hub_file = listing.file(part)
        url = resolve_url(listing.endpoint, listing.repo, listing.revision, part)
        expected = Expected(
            size=hub_file.size,
            sha256=hub_file.sha256,
            git_blob_sha1=None if hub_file.sha256 else hub_file.blob_id,
        )
        out.append(download(url, dest, expected, token=token, progress=progress, cancel=cancel))
    return out
