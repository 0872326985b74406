"""Listing a Hub repo's files (sizes, LFS sha256) through huggingface_hub, cached for offline use."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from frogdesk.durable import atomic_write_text
from frogdesk.inert import inert_line
from frogdesk.models.errors import HubRequestError, ModelError, UnsafeName
from frogdesk.models.hub_http import RequestDeadline, get_json, next_page
from frogdesk.models.listing import HubFile, RepoListing
from frogdesk.models.names import check_commit, check_object_id, safe_relative
from frogdesk.models.retry import NO_RETRY, RetryPolicy
from frogdesk.typedjson import build

DEFAULT_ENDPOINT = "https://huggingface.co"
MAX_FILE_BYTES = 1 << 50
"""A listed size must be below this (1 PiB): a larger one is a broken or hostile listing."""
MAX_PAGES = 100
"""Most tree pages one listing may take (the Hub sends 1,000 entries a page)."""
MAX_ENTRIES = 200_000
"""Most tree entries one listing may hold, however they are paged."""
LISTING_SECONDS = 120.0
"""Longest one attempt at a listing may take, every page included (a real one takes seconds)."""


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
    """The last listing saved for this endpoint, repo and revision, or None.

    A saved file that names another endpoint, repo or revision counts as none: pull downloads
    from the listing's endpoint with the user's token, so an edited copy must not choose it.
    """
    target = _cache_file(cache_dir, endpoint, repo, revision)
    try:
        listing = build(RepoListing, json.loads(target.read_text(encoding="utf-8")))
        if (listing.endpoint, listing.repo, listing.revision) != (endpoint, repo, revision):
            return None
        if not math.isfinite(listing.fetched_at):
            return None
        where = f"the saved listing {target.name}"
        if listing.commit:
            check_commit(listing.commit, where)
        for item in listing.files:  # downloads name their files after these
            safe_relative(item.path, where)
            check_object_id(item.blob_id, where)
            if item.sha256 is not None:
                check_object_id(item.sha256, where)
            if not 0 <= item.size < MAX_FILE_BYTES:
                return None
    except (OSError, ValueError, RecursionError, UnsafeName):  # damaged: as if none was saved
        return None
    return dataclasses.replace(listing, from_cache=True)


class _BadSize(ValueError):
    """A tree entry's size is not a byte count a file can have."""


def _file_size(value: object, path: str, where: str) -> int:
    """A listed size: a whole number of bytes from 0 up to MAX_FILE_BYTES, else _BadSize."""
    if type(value) is int and 0 <= value < MAX_FILE_BYTES:
        return value
    raise _BadSize(
        f"refused {inert_line(repr(path))} from {where}: its size is not a whole number "
        "of bytes below 1 PiB"
    )


def _tree_entry(item: Any, where: str) -> HubFile:
    """One file entry of the tree API, its name, size and ids checked."""
    lfs = item.get("lfs") or None
    sha256 = check_object_id(str(lfs["oid"]).lower(), where) if lfs else None
    path = str(item["path"])
    safe_relative(path, where)
    size = _file_size(item["size"], path, where)
    return HubFile(path, size, sha256, check_object_id(str(item["oid"]), where))


def _fetch(
    repo: str, revision: str, endpoint: str, token: str | None, timeout: float, seconds: float
) -> tuple[str, tuple[HubFile, ...], tuple[str, ...]]:
    """(commit, files, refusals): the revision's commit, then its whole tree, page by page.

    However the Hub answers, this ends: within `seconds` in all, after MAX_PAGES pages or
    MAX_ENTRIES entries, and at the first page that points back to one already read.
    """
    with RequestDeadline(seconds) as deadline:
        base = f"{endpoint}/api/models/{repo}"
        info, _ = get_json(
            f"{base}/revision/{quote(revision, safe='')}",
            token=token,
            timeout=timeout,
            deadline=deadline,
        )
        commit = check_commit(str(info.get("sha", "")) if isinstance(info, dict) else "", endpoint)
        url: str | None = f"{base}/tree/{commit}?recursive=true&expand=false"
        files: list[HubFile] = []
        refused: list[str] = []
        seen: set[str] = set()
        entries = 0
        while url is not None:
            if url in seen:
                raise HubRequestError(
                    "its listing pages loop back to a page already read; refused", lasting=True
                )
            if len(seen) >= MAX_PAGES:
                raise HubRequestError(
                    f"the listing runs past {MAX_PAGES} pages; refused", lasting=True
                )
            seen.add(url)
            page, headers = get_json(url, token=token, timeout=timeout, deadline=deadline)
            if not isinstance(page, list):
                raise HubRequestError(f"{endpoint} sent a tree that is not a list", lasting=True)
            entries += len(page)
            if entries > MAX_ENTRIES:
                raise HubRequestError(
                    f"the listing has more than {MAX_ENTRIES} entries; refused", lasting=True
                )
            _read_page(page, repo, files, refused)
            url = next_page(headers, url)
    return commit, tuple(files), tuple(refused)


def _read_page(page: list[Any], repo: str, files: list[HubFile], refused: list[str]) -> None:
    """Add one tree page's files, or a line saying why each bad entry was refused."""
    where = f"the listing of {repo}"
    for item in page:
        if not isinstance(item, dict) or item.get("type") != "file":
            continue
        try:
            files.append(_tree_entry(item, where))
        except (UnsafeName, _BadSize) as exc:
            refused.append(str(exc))
        except (KeyError, TypeError, ValueError):
            refused.append(f"refused a malformed entry of {where}")


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
    seconds: float = LISTING_SECONDS,
) -> RepoListing:
    """The repo's files from the Hub (saved for later), or the saved listing when offline or unreachable.

    A failure that cannot heal soon (the name does not resolve, the connection is refused,
    no route) ends at once; a transient one (timeout, 5xx) is retried as `retry` says, with
    its countdown reported. Either way the saved listing, when there is one, is returned
    with `offline_reason` saying why. `timeout` bounds each read, `seconds` each attempt.
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
            commit, files, refused = _fetch(repo, revision, endpoint, token, timeout, seconds)
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
