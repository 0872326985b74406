"""Resumable, verified, cancellable download of one file over HTTP range requests."""

from __future__ import annotations

import errno
import fcntl
import hashlib
import http.client
import json
import os
import shutil
import threading
import time
import urllib.error
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frogdesk.config import HubSettings
from frogdesk.durable import publish
from frogdesk.errors import DiskFullError
from frogdesk.models.errors import (
    ChecksumError,
    DownloadCancelled,
    DownloadError,
    DownloadStalled,
)
from frogdesk.models.hub_http import RequestDeadline, open_url
from frogdesk.models.progress import Progress, ProgressCallback
from frogdesk.sizes import human_bytes

__all__ = ["DiskFullError"]  # raised here for a full disk; the partial file is deleted

CHUNK = 1 << 20
_DISK_FULL = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}


@dataclass(frozen=True)
class DownloadLimits:
    """Bounds on one download run, so a server that trickles bytes cannot hold it forever."""

    deadline: float = 0.0
    """Seconds the whole run may take, from the connection on; 0 for no deadline."""
    min_rate: float = 1024.0
    """Bytes per second the download must average over each `window`; 0 to allow any rate."""
    window: float = 60.0
    """Seconds over which `min_rate` is judged (and the longest wait for one read)."""
    timeout: float = 30.0
    """Seconds to wait for the connection and for each read."""


@dataclass(frozen=True)
class Expected:
    """What the finished file must be."""

    size: int
    sha256: str | None = None
    git_blob_sha1: str | None = None
    """For small non-LFS files, the git blob id."""


def download_limits(settings: HubSettings) -> DownloadLimits:
    """The download bounds the `[hub]` settings ask for."""
    return DownloadLimits(
        deadline=settings.download_deadline,
        min_rate=settings.download_min_rate,
        window=settings.download_stall_seconds,
        timeout=min(30.0, settings.download_stall_seconds),
    )


def partial_path(dest: Path) -> Path:
    """Where the bytes received so far are kept (by default)."""
    return dest.with_name(dest.name + ".partial")


def _meta_path(partial: Path) -> Path:
    return partial.with_name(partial.name + ".json")


def _new_hasher(expected: Expected) -> Any:
    if expected.sha256:
        return hashlib.sha256()
    hasher = hashlib.sha1()
    hasher.update(f"blob {expected.size}\0".encode())
    return hasher


def _discard(partial: Path) -> None:
    for path in (partial, _meta_path(partial)):
        path.unlink(missing_ok=True)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class _Reporter:
    def __init__(
        self, name: str, total: int, start: int, callback: ProgressCallback | None
    ) -> None:
        self.name, self.total, self.start, self.callback = name, total, start, callback
        self.began = time.monotonic()
        self.last = 0.0

    def __call__(self, done: int, final: bool = False) -> None:
        if self.callback is None:
            return
        now = time.monotonic()
        if not final and now - self.last < 0.1:
            return
        self.last = now
        elapsed = now - self.began
        rate = (done - self.start) / elapsed if elapsed > 0 else 0.0
        eta = (self.total - done) / rate if rate > 0 else None
        self.callback(Progress(self.name, done, self.total, rate, eta, self.start))


def _lock(path: Path | None, name: str) -> int | None:
    """Hold an exclusive lock file (huggingface_hub's own, in the cache) for this run."""
    if path is None:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise DownloadError(f"{name}: another download of this file is running") from None
    return fd


def download(
    url: str,
    dest: Path,
    expected: Expected,
    *,
    token: str | None = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    limits: DownloadLimits | None = None,
    partial: Path | None = None,
    lock: Path | None = None,
    label: str = "",
) -> Path:
    """Download url to dest, continuing an earlier partial file, and verify it before renaming.

    dest only ever appears complete and verified. Raises DownloadError (partial kept),
    DownloadStalled (too slow or past the deadline; partial kept), ChecksumError or
    DiskFullError (partial deleted), DownloadCancelled (partial kept). `partial` and `lock`
    default to dest.partial and none; `label` names the file in messages (default dest's name).
    """
    if dest.is_file() and dest.stat().st_size == expected.size:
        return dest
    limits = limits or DownloadLimits()
    name = label or dest.name
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = partial or partial_path(dest)
    meta = _meta_path(partial)
    identity = {"size": expected.size, "sha256": expected.sha256, "blob": expected.git_blob_sha1}
    lock_fd = _lock(lock, name)
    try:
        fd = os.open(partial, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise DownloadError(f"{name}: another download of this file is running") from None
            try:
                same = json.loads(meta.read_text()) == identity
            except (OSError, ValueError):
                same = False
            if not same:
                os.ftruncate(fd, 0)  # bytes of another version of the file, or of unknown origin
                meta.write_text(json.dumps(identity))
            try:
                _fetch_into(fd, url, partial, name, expected, token, progress, cancel, limits)
                os.fsync(fd)
            except DiskFullError:
                _discard(partial)
                raise
            except OSError as exc:
                if exc.errno not in _DISK_FULL:
                    raise
                _discard(partial)
                raise DiskFullError(
                    f"{name}: disk full ({exc.strerror}); nothing was kept"
                ) from None
        finally:
            os.close(fd)
        publish(partial, dest)
        meta.unlink(missing_ok=True)
    finally:
        if lock_fd is not None:
            os.close(lock_fd)
    return dest


def _open_range(
    url: str, start: int, token: str | None, timeout: float, deadline: RequestDeadline
) -> Any:
    headers = {"Range": f"bytes={start}-"} if start else {}
    return open_url(url, token=token, timeout=timeout, headers=headers, deadline=deadline)


def _past_deadline(name: str, have: int, total: int, limits: DownloadLimits) -> DownloadStalled:
    return DownloadStalled(
        f"{name}: stopped at {have} of {total} bytes after the {limits.deadline:g} s "
        "download deadline; the partial is kept, run again to resume"
    )


def _fetch_into(
    fd: int,
    url: str,
    partial: Path,
    name: str,
    expected: Expected,
    token: str | None,
    progress: ProgressCallback | None,
    cancel: threading.Event | None,
    limits: DownloadLimits,
) -> None:
    have = os.fstat(fd).st_size
    if have > expected.size:
        os.ftruncate(fd, 0)
        have = 0
    hasher = _new_hasher(expected)
    os.lseek(fd, 0, os.SEEK_SET)
    for block in iter(lambda: os.read(fd, CHUNK), b""):
        hasher.update(block)
    free = shutil.disk_usage(partial.parent).free
    if expected.size - have > free:
        _discard(partial)
        raise DiskFullError(
            f"{name}: needs {human_bytes(expected.size - have)} more, "
            f"{human_bytes(free)} free on {partial.parent}"
        )
    report = _Reporter(name, expected.size, have, progress)
    if have < expected.size:
        # the deadline holds from the connection on: headers can drip as slowly as a body
        with RequestDeadline(limits.deadline) as deadline:
            try:
                timeout = min(limits.timeout, limits.window)
                response = _open_range(url, have, token, timeout, deadline)
            except urllib.error.HTTPError as exc:
                if exc.code == 416:  # the server's file is shorter than our partial: start over
                    os.ftruncate(fd, 0)
                raise _http_error(exc, name) from None
            except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
                if deadline.expired:
                    raise _past_deadline(name, have, expected.size, limits) from None
                raise DownloadError(
                    f"{name}: cannot connect ({exc}); run again to resume"
                ) from None
            with response:
                if deadline.expired:  # its headers may be cut short: trust none of them
                    raise _past_deadline(name, have, expected.size, limits)
                content_range = response.headers.get("Content-Range", "")
                if response.status == 206 and not content_range.startswith(f"bytes {have}-"):
                    raise DownloadError(
                        f"{name}: the server answered range {have}- with '{content_range}'"
                    )
                if have and response.status == 200:  # the server ignored the range: start over
                    os.ftruncate(fd, 0)
                    have = 0
                    hasher = _new_hasher(expected)
                    report.start = 0
                os.lseek(fd, have, os.SEEK_SET)
                have = _copy(
                    response,
                    fd,
                    hasher,
                    have,
                    expected.size,
                    name,
                    report,
                    cancel,
                    limits,
                    deadline,
                )
    report(have, final=True)
    if have != expected.size:
        raise DownloadError(
            f"{name}: connection closed at {have} of {expected.size} bytes; run again to resume"
        )
    digest = hasher.hexdigest()
    want = expected.sha256 or expected.git_blob_sha1
    if want and digest != want.lower():
        _discard(partial)
        raise ChecksumError(
            f"{name}: checksum mismatch (expected {want}, got {digest}); the download was deleted"
        )


def _copy(
    response: Any,
    fd: int,
    hasher: Any,
    have: int,
    total: int,
    name: str,
    report: _Reporter,
    cancel: threading.Event | None,
    limits: DownloadLimits,
    deadline: RequestDeadline,
) -> int:
    window_start = time.monotonic()
    window_bytes = 0
    while have < total:
        if cancel is not None and cancel.is_set():
            raise DownloadCancelled(
                f"{name}: cancelled at {have} of {total} bytes; run again to resume"
            )
        now = time.monotonic()
        if deadline.expired:
            raise _past_deadline(name, have, total, limits)
        if now - window_start >= limits.window:
            if limits.min_rate and window_bytes < limits.min_rate * (now - window_start):
                raise DownloadStalled(
                    f"{name}: stalled at {have} of {total} bytes ({window_bytes} bytes in the "
                    f"last {now - window_start:.0f} s, below the minimum {human_bytes(limits.min_rate)}/s); "
                    "the partial is kept, run again to resume"
                )
            window_start, window_bytes = now, 0
        try:
            # read1 returns what has arrived: read() would wait for a whole chunk, however slow
            block = response.read1(min(CHUNK, total - have))
        except (OSError, http.client.HTTPException) as exc:
            if deadline.expired:  # the deadline shut the connection
                raise _past_deadline(name, have, total, limits) from None
            if isinstance(exc, TimeoutError):
                raise DownloadStalled(
                    f"{name}: stalled at {have} of {total} bytes (nothing received for "
                    f"{min(limits.timeout, limits.window):g} s); the partial is kept, "
                    "run again to resume"
                ) from None
            raise DownloadError(
                f"{name}: connection lost at {have} of {total} bytes ({exc}); run again to resume"
            ) from None
        if not block:
            if deadline.expired:
                raise _past_deadline(name, have, total, limits)
            break
        try:
            _write_all(fd, block)
        except OSError as exc:
            if exc.errno in _DISK_FULL:
                os.ftruncate(fd, 0)
                raise DiskFullError(
                    f"{name}: disk full after {have} of {total} bytes; nothing was kept"
                ) from None
            raise
        hasher.update(block)
        have += len(block)
        window_bytes += len(block)
        report(have)
    return have


def _http_error(exc: urllib.error.HTTPError, name: str) -> DownloadError:
    if exc.code in (401, 403):
        return DownloadError(
            f"{name}: HTTP {exc.code}: the repo is gated or private; accept its terms on the Hub and "
            "log in (`hf auth login`) or set HF_TOKEN"
        )
    if exc.code == 404:
        return DownloadError(f"{name}: not found on the server (HTTP 404)")
    if exc.code == 416:
        return DownloadError(
            f"{name}: the file on the server changed; the partial was reset, run again"
        )
    return DownloadError(f"{name}: HTTP {exc.code} {exc.reason}; run again to resume")
