"""A Hub repo's files as listed (from the Hub or its saved copy), and where a listing came from."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from frogdesk.models.errors import ModelError


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


def age_text(seconds: float) -> str:
    """A listing's age in words: 40 s, 12 min, 5 h, 3 days."""
    if not math.isfinite(seconds):
        return "an unknown time"
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
