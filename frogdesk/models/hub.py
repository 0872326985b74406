"""Listing a Hub repo's files (sizes, LFS sha256) through huggingface_hub, cached for offline use."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from frogdesk.durable import atomic_write_text
from frogdesk.models.errors import ModelError
from frogdesk.models.hub_http import NO_RETRY, HubRequestError, RetryPolicy, get_json, next_page
from frogdesk.models.names import UnsafeName, check_commit, check_object_id, safe_relative
from frogdesk.typedjson import build

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
    commit: str = ""
    """The commit the revision pointed at when listed ("" in listings saved by older versions)."""
    offline_reason: str = ""
    """Why the saved copy stands in for the Hub (empty when fresh)."""
    refused: tuple[str, ...] = ()
    """One line per listed name refused as unsafe (absolute, `..`, control characters)."""

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
    host = quote(urlsplit(endpoint).netloc, safe="").replace("%3A", "_").lstrip(".") or "hub"
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
        listing = build(RepoListing, json.loads(target.read_text(encoding="utf-8")))
        where = f"the saved listing {target.name}"
        for item in listing.files:  # downloads name their files after these
            safe_relative(item.path, where)
            check_object_id(item.blob_id, where)
            if item.sha256 is not None:
                check_object_id(item.sha256, where)
    except (OSError, ValueError, UnsafeName):  # damaged: as if none was saved
        return None
    return dataclasses.replace(listing, from_cache=True)


def _tree_entry(item: Any, where: str) -> HubFile:
    """One file entry of the tree API, its name and ids checked."""
    lfs = item.get("lfs") or None
    sha256 = check_object_id(str(lfs["oid"]).lower(), where) if lfs else None
    path = str(item["path"])
    safe_relative(path, where)
    return HubFile(path, int(item["size"]), sha256, check_object_id(str(item["oid"]), where))


def _fetch(
    repo: str, revision: str, endpoint: str, token: str | None, timeout: float
) -> tuple[str, tuple[HubFile, ...], tuple[str, ...]]:
    """(commit, files, refusals): the revision's commit, then its whole tree, page by page."""
    base = f"{endpoint}/api/models/{repo}"
    info, _ = get_json(f"{base}/revision/{quote(revision, safe='')}", token=token, timeout=timeout)
    commit = check_commit(str(info.get("sha", "")) if isinstance(info, dict) else "", endpoint)
    url: str | None = f"{base}/tree/{commit}?recursive=true&expand=false"
    files: list[HubFile] = []
    refused: list[str] = []
    while url is not None:
        page, headers = get_json(url, token=token, timeout=timeout)
        if not isinstance(page, list):
            raise HubRequestError(f"{endpoint} sent a tree that is not a list", lasting=True)
        for item in page:
            if not isinstance(item, dict) or item.get("type") != "file":
                continue
            try:
                files.append(_tree_entry(item, f"the listing of {repo}"))
            except UnsafeName as exc:
                refused.append(str(exc))
            except (KeyError, TypeError, ValueError):
                refused.append(f"refused a malformed entry of the listing of {repo}")
        url = next_page(headers, url)
    return commit, tuple(files), tuple(refused)


def _http_failure(
    repo: str, revision: str, endpoint: str, token: str | None, exc: HubRequestError
) -> ModelError | None:
    """The error to raise for a definite answer from the Hub (not found, gated), else None."""
    if exc.code == "GatedRepo" or (exc.status == 403 and token):
        return ModelError(
            f"{repo} is gated: accept its terms on the Hub, then log in (`hf auth login`) or set HF_TOKEN"
        )
    if exc.code == "RevisionNotFound":
        return ModelError(f"{repo}: no revision '{revision}'")
    if exc.code == "RepoNotFound" or exc.status == 404:
        hint = "" if token else " (if it is private, log in with `hf auth login` or set HF_TOKEN)"
        return ModelError(f"{repo}: no such repo on {endpoint}{hint}")
    if exc.status in (401, 403):
        return ModelError(
            f"{repo}: HTTP {exc.status} from {endpoint}: the repo is private or gated; log in "
            "(`hf auth login`) or set HF_TOKEN"
        )
    return None


def list_repo(
    repo: str,
    *,
    endpoint: str,
    cache_dir: Path,
    revision: str = "main",
    token: str | None = None,
    offline: bool | None = None,
    retry: RetryPolicy = NO_RETRY,
    timeout: float = 10.0,
) -> RepoListing:
    """The repo's files from the Hub (saved for later), or the saved listing when offline or unreachable.

    A failure that cannot heal soon (the name does not resolve, the connection is refused,
    no route) ends at once; a transient one (timeout, 5xx) is retried as `retry` says, with
    its countdown reported. Either way the saved listing, when there is one, is returned
    with `offline_reason` saying why.
    """
    if offline is None:
        offline = offline_requested()
    if offline:
        cached = cached_listing(cache_dir, endpoint, repo, revision)
        if cached is None:
            raise ModelError(
                f"{repo}: offline and no saved listing (HF_HUB_OFFLINE is set); "
                f"run `frogdesk models list {repo}` online once"
            )
        return dataclasses.replace(cached, offline_reason="HF_HUB_OFFLINE is set")
    attempt = 0
    while True:
        try:
            commit, files, refused = _fetch(repo, revision, endpoint, token, timeout)
            break
        except HubRequestError as exc:
            definite = _http_failure(repo, revision, endpoint, token, exc)
            if definite is not None:
                raise definite from None
            if exc.lasting or attempt >= len(retry.waits):
                return _fallback(cache_dir, endpoint, repo, revision, str(exc))
            retry.wait(attempt, str(exc))
            attempt += 1
    listing = RepoListing(
        repo, revision, endpoint, files, fetched_at=time.time(), commit=commit, refused=refused
    )
    _save(cache_dir, listing)
    return listing


def _fallback(cache_dir: Path, endpoint: str, repo: str, revision: str, reason: str) -> RepoListing:
    """The saved listing when the Hub cannot be reached, else the error."""
    cached = cached_listing(cache_dir, endpoint, repo, revision)
    if cached is not None:
        return dataclasses.replace(cached, offline_reason=reason)
    raise ModelError(f"{repo}: cannot list files on {endpoint}: {reason}; no saved listing")


def age_text(seconds: float) -> str:
    """A listing's age in words: 40 s, 12 min, 5 h, 3 days."""
    if seconds < 90:
        return f"{max(0, int(seconds))} s"
    if seconds < 90 * 60:
        return f"{int(seconds // 60)} min"
    if seconds < 48 * 3600:
        return f"{int(seconds // 3600)} h"
    return f"{int(seconds // 86400)} days"


def source_line(listing: RepoListing, now: float | None = None) -> str:
    """Where a listing came from, in one line: the endpoint, or the saved copy, its age and why."""
    if not listing.from_cache:
        return listing.endpoint
    age = age_text((now or time.time()) - listing.fetched_at)
    why = f"{listing.offline_reason}; " if listing.offline_reason else ""
    return f"saved listing from {age} ago ({why}offline)"
