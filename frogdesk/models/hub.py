"""Listing a Hub repo's files (sizes, LFS sha256) through huggingface_hub, cached for offline use."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

from frogdesk.durable import atomic_write_text
from frogdesk.models.errors import ModelError

DEFAULT_ENDPOINT = "https://huggingface.co"


@dataclass(frozen=True)
class HubFile:
    """One file of a repo as the Hub lists it."""

    path: str
    size: int
    sha256: str | None
    """The LFS object's sha256; None for files stored in git itself."""
    blob_id: str
    """The git blob id (sha1 over the git blob header and the bytes)."""


@dataclass(frozen=True)
class RepoListing:
    """A repo's files at one revision, from the Hub or from the offline cache."""

    repo: str
    revision: str
    endpoint: str
    files: tuple[HubFile, ...]
    fetched_at: float
    from_cache: bool = False

    def file(self, path: str) -> HubFile:
        """The listed file at this path."""
        for item in self.files:
            if item.path == path:
                return item
        raise ModelError(f"{self.repo}: no file {path} in the listing")


def resolve_endpoint(explicit: str | None = None, configured: str = "") -> str:
    """--endpoint, else the settings' hf_endpoint, else HF_ENDPOINT, else huggingface.co."""
    for candidate in (explicit, configured, os.environ.get("HF_ENDPOINT")):
        if candidate:
            return candidate.rstrip("/")
    return DEFAULT_ENDPOINT


def hub_token() -> str | None:
    """A token from the usual Hugging Face places (HF_TOKEN, the saved login), if any."""
    from huggingface_hub import get_token

    token: str | None = get_token()
    return token


def offline_requested() -> bool:
    """HF_HUB_OFFLINE is set to a true value right now."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def resolve_url(endpoint: str, repo: str, revision: str, path: str) -> str:
    """The download URL of one file: {endpoint}/{repo}/resolve/{revision}/{path}."""
    return f"{endpoint}/{repo}/resolve/{quote(revision, safe='')}/{quote(path)}"


def _cache_file(cache_dir: Path, endpoint: str, repo: str, revision: str) -> Path:
    host = urlsplit(endpoint).netloc.replace(":", "_") or "hub"
    return (
        cache_dir
        / "hub-listings"
        / host
        / repo.replace("/", "--")
        / f"{quote(revision, safe='')}.json"
    )


def _save(cache_dir: Path, listing: RepoListing) -> None:
    target = _cache_file(cache_dir, listing.endpoint, listing.repo, listing.revision)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(target, json.dumps(asdict(listing)))


def cached_listing(
    cache_dir: Path, endpoint: str, repo: str, revision: str = "main"
) -> RepoListing | None:
    """The last listing saved for this repo, or None."""
    target = _cache_file(cache_dir, endpoint, repo, revision)
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
        files = tuple(HubFile(**f) for f in data.pop("files"))
        data["from_cache"] = True
        return RepoListing(files=files, **data)
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _fetch(repo: str, revision: str, endpoint: str, token: str | None) -> tuple[HubFile, ...]:
    from huggingface_hub import HfApi
    from huggingface_hub.hf_api import RepoFile

    api = HfApi(endpoint=endpoint, token=token or False)
    items = api.list_repo_tree(repo, recursive=True, revision=revision)
    return tuple(
        HubFile(
            path=item.path,
            size=int(item.size),
            sha256=item.lfs.sha256 if item.lfs else None,
            blob_id=item.blob_id,
        )
        for item in items
        if isinstance(item, RepoFile)
    )


def list_repo(
    repo: str,
    *,
    endpoint: str,
    cache_dir: Path,
    revision: str = "main",
    token: str | None = None,
    offline: bool | None = None,
) -> RepoListing:
    """The repo's files from the Hub (saved for later), or the saved listing when offline or unreachable."""
    if offline is None:
        offline = offline_requested()
    if offline:
        cached = cached_listing(cache_dir, endpoint, repo, revision)
        if cached is None:
            raise ModelError(
                f"{repo}: offline and no saved listing; run `frogdesk models list {repo}` online once"
            )
        return cached
    import httpx2
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        files = _fetch(repo, revision, endpoint, token)
    except GatedRepoError:
        raise ModelError(
            f"{repo} is gated: accept its terms on the Hub, then log in (`hf auth login`) or set HF_TOKEN"
        ) from None
    except RepositoryNotFoundError:
        hint = "" if token else " (if it is private, log in with `hf auth login` or set HF_TOKEN)"
        raise ModelError(f"{repo}: no such repo on {endpoint}{hint}") from None
    except RevisionNotFoundError:
        raise ModelError(f"{repo}: no revision '{revision}'") from None
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else 0
        if status in (401, 403):
            raise ModelError(
                f"{repo}: HTTP {status} from {endpoint}: the repo is private or gated; log in "
                "(`hf auth login`) or set HF_TOKEN"
            ) from None
        return _fallback(cache_dir, endpoint, repo, revision, exc)
    except (httpx2.HTTPError, OSError, ValueError) as exc:
        return _fallback(cache_dir, endpoint, repo, revision, exc)
    listing = RepoListing(repo, revision, endpoint, files, fetched_at=time.time())
    _save(cache_dir, listing)
    return listing


def _fallback(
    cache_dir: Path, endpoint: str, repo: str, revision: str, exc: Exception
) -> RepoListing:
    """The saved listing when the Hub cannot be reached, else the error."""
    cached = cached_listing(cache_dir, endpoint, repo, revision)
    if cached is not None:
        return cached
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    raise ModelError(f"{repo}: cannot list files on {endpoint}: {first}") from None
