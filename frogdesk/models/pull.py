"""Pulling one model (every part of it) from a Hub repo into the shared Hugging Face cache."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from frogdesk.inert import inert_line
from frogdesk.models.download import DownloadLimits, Expected, download
from frogdesk.models.errors import ModelError
from frogdesk.models.hf_cache import (
    blob_path,
    incomplete_path,
    link_snapshot,
    lock_path,
    snapshot_path,
    write_ref,
)
from frogdesk.models.hub import offline_requested, resolve_url
from frogdesk.models.listing import HubFile, RepoListing
from frogdesk.models.progress import ProgressCallback
from frogdesk.models.spec import ModelGroup, ModelSpec, group_files, pick_group


@dataclass(frozen=True)
class PullPlan:
    """The files a pull will fetch, with their total size."""

    group: ModelGroup
    destinations: tuple[Path, ...]
    """The snapshot names the parts will have in the cache (what other tools open)."""
    total_bytes: int


def _commit(listing: RepoListing) -> str:
    if not listing.commit:
        raise ModelError(
            f"{listing.repo}: the saved listing predates the shared cache (no commit id); "
            f"run `frogdesk models list {listing.repo}` online once"
        )
    return listing.commit


def plan_pull(spec: ModelSpec, listing: RepoListing, cache_dir: Path) -> PullPlan:
    """Pick the spec's model in the listing (refusing vision projectors) and where its parts go."""
    group = pick_group(group_files(f.path for f in listing.files), spec.quant, spec.repo)
    commit = _commit(listing)
    destinations = tuple(snapshot_path(cache_dir, spec.repo, commit, p) for p in group.parts)
    total = sum(listing.file(p).size for p in group.parts)
    return PullPlan(group, destinations, total)


def object_id(hub_file: HubFile) -> str:
    """The blob name of a listed file: its LFS sha256, else its git blob id (as huggingface_hub)."""
    return hub_file.sha256 or hub_file.blob_id


def expected_of(hub_file: HubFile) -> Expected:
    """What the downloaded bytes must be."""
    return Expected(
        size=hub_file.size,
        sha256=hub_file.sha256,
        git_blob_sha1=None if hub_file.sha256 else hub_file.blob_id,
    )


def pull(
    spec: ModelSpec,
    listing: RepoListing,
    cache_dir: Path,
    *,
    token: str | None = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    limits: DownloadLimits | None = None,
    offline: bool | None = None,
) -> list[Path]:
    """Download (or resume) every part of the spec's model into the cache; returns the snapshot paths.

    A part whose blob is already in the cache (pulled by any tool) is only linked. Offline
    (HF_HUB_OFFLINE), a part that is not in the cache is an error, not a request.
    """
    if listing.repo != spec.repo:  # the listing names where bytes come from, the spec where they go
        raise ModelError(
            f"{spec.repo}: the listing given is of another repo ({inert_line(listing.repo)})"
        )
    plan = plan_pull(spec, listing, cache_dir)
    commit = _commit(listing)
    offline = offline_requested() if offline is None else offline
    for part in plan.group.parts:
        hub_file = listing.file(part)
        blob = blob_path(cache_dir, spec.repo, object_id(hub_file))
        if blob.is_file() and blob.stat().st_size == hub_file.size:
            continue
        if offline:
            raise ModelError(
                f"{part} is not in the Hugging Face cache and HF_HUB_OFFLINE is set; "
                "unset it to download"
            )
        download(
            resolve_url(listing.endpoint, listing.repo, commit, part),
            blob,
            expected_of(hub_file),
            token=token,
            progress=progress,
            cancel=cancel,
            limits=limits,
            partial=incomplete_path(blob),
            lock=lock_path(cache_dir, spec.repo, object_id(hub_file)),
            label=part.rsplit("/", 1)[-1],
        )
    for part, link in zip(plan.group.parts, plan.destinations, strict=True):
        link_snapshot(blob_path(cache_dir, spec.repo, object_id(listing.file(part))), link)
    write_ref(cache_dir, spec.repo, listing.revision, commit)
    return list(plan.destinations)
