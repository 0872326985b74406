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
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from frogdesk.errors import DiskFullError
from frogdesk.models.errors import ModelError

__all__ = ["DiskFullError"]  # raised here for a full disk; the partial file is deleted

CHUNK = 1 << 20
_DISK_FULL = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}


class DownloadError(ModelError):
    """The download stopped; what was received is kept in the .partial file to resume from."""


class ChecksumError(DownloadError):
    """The received bytes do not match the Hub's sha256; they were deleted."""


class DownloadCancelled(DownloadError):
    """The user cancelled; the partial file is kept for a later resume."""


@dataclass(frozen=True)
class Progress:
    """Where a download stands, for a progress line or bar."""

    file: str
    done: int
    total: int
    rate: float
    """Bytes per second over this run (resumed bytes excluded)."""
    eta: float | None
    """Seconds left at that rate; None before the rate is known."""
    resumed_from: int = 0


ProgressCallback = Callable[[Progress], None]


@dataclass(frozen=True)
class Expected:
    """What the finished file must be."""

    size: int
    sha256: str | None = None
    git_blob_sha1: str | None = None
    """For small non-LFS files, the git blob id."""


class _NoAuthLeak(urllib.request.HTTPRedirectHandler):
    """Follow redirects, dropping the token when the redirect goes to another host (a CDN)."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and urlsplit(newurl).netloc != urlsplit(req.full_url).netloc:
            new.remove_header("Authorization")
        return new


def partial_path(dest: Path) -> Path:
    """Where the bytes received so far are kept."""
    return dest.with_name(dest.name + ".partial")


def _meta_path(dest: Path) -> Path:
    return dest.with_name(dest.name + ".partial.json")


def _new_hasher(expected: Expected) -> Any:
    if expected.sha256:
        return hashlib.sha256()
    hasher = hashlib.sha1()
    hasher.update(f"blob {expected.size}\0".encode())
    return hasher


def _discard(dest: Path) -> None:
    for path in (partial_path(dest), _meta_path(dest)):
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


def download(
    url: str,
    dest: Path,
    expected: Expected,
    *,
    token: str | None = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    timeout: float = 30.0,
) -> Path:
    """Download url to dest, continuing an earlier .partial file, and verify it before renaming.

    dest only ever appears complete and verified. Raises DownloadError (partial kept),
    ChecksumError or DiskFullError (partial deleted), DownloadCancelled (partial kept).
    """
    if dest.is_file() and dest.stat().st_size == expected.size:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial, meta = partial_path(dest), _meta_path(dest)
    identity = {"size": expected.size, "sha256": expected.sha256, "blob": expected.git_blob_sha1}
    fd = os.open(partial, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DownloadError(f"{dest.name}: another download of this file is running") from None
        try:
            same = json.loads(meta.read_text()) == identity
        except (OSError, ValueError):
            same = False
        if not same:
            os.ftruncate(fd, 0)  # bytes of another version of the file, or of unknown origin
            meta.write_text(json.dumps(identity))
        try:
            _fetch_into(fd, url, dest, expected, token, progress, cancel, timeout)
            os.fsync(fd)
        except DiskFullError:
            _discard(dest)
            raise
        except OSError as exc:
            if exc.errno not in _DISK_FULL:
                raise
            _discard(dest)
            raise DiskFullError(
                f"{dest.name}: disk full ({exc.strerror}); nothing was kept"
            ) from None
    finally:
        os.close(fd)
    os.replace(partial, dest)
    meta.unlink(missing_ok=True)
    return dest


def _open_range(url: str, start: int, token: str | None, timeout: float) -> Any:
    request = urllib.request.Request(url, headers={"User-Agent": "frogdesk"})
    if start:
        request.add_header("Range", f"bytes={start}-")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    opener = urllib.request.build_opener(_NoAuthLeak())
    return opener.open(request, timeout=timeout)


def _fetch_into(
    fd: int,
    url: str,
    dest: Path,
    expected: Expected,
    token: str | None,
    progress: ProgressCallback | None,
    cancel: threading.Event | None,
    timeout: float,
) -> None:
    have = os.fstat(fd).st_size
    if have > expected.size:
        os.ftruncate(fd, 0)
        have = 0
    hasher = _new_hasher(expected)
    os.lseek(fd, 0, os.SEEK_SET)
    for block in iter(lambda: os.read(fd, CHUNK), b""):
        hasher.update(block)
    free = shutil.disk_usage(dest.parent).free
    if expected.size - have > free:
        _discard(dest)
        raise DiskFullError(
            f"{dest.name}: needs {(expected.size - have) / 2**30:.2f} GiB more, "
            f"{free / 2**30:.2f} GiB free on {dest.parent}"
        )
    report = _Reporter(dest.name, expected.size, have, progress)
    if have < expected.size:
        try:
            response = _open_range(url, have, token, timeout)
        except urllib.error.HTTPError as exc:
            if exc.code == 416:  # the server's file is shorter than our partial: start over
                os.ftruncate(fd, 0)
            raise _http_error(exc, dest.name) from None
        except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            raise DownloadError(
                f"{dest.name}: cannot connect ({exc}); run again to resume"
            ) from None
        with response:
            content_range = response.headers.get("Content-Range", "")
            if response.status == 206 and not content_range.startswith(f"bytes {have}-"):
                raise DownloadError(
                    f"{dest.name}: the server answered range {have}- with '{content_range}'"
                )
            if have and response.status == 200:  # the server ignored the range: start over
                os.ftruncate(fd, 0)
                have = 0
                hasher = _new_hasher(expected)
                report.start = 0
            os.lseek(fd, have, os.SEEK_SET)
            have = _copy(response, fd, hasher, have, expected.size, dest.name, report, cancel)
    report(have, final=True)
    if have != expected.size:
        raise DownloadError(
            f"{dest.name}: connection closed at {have} of {expected.size} bytes; run again to resume"
        )
    digest = hasher.hexdigest()
    want = expected.sha256 or expected.git_blob_sha1
    if want and digest != want.lower():
        _discard(dest)
        raise ChecksumError(
            f"{dest.name}: checksum mismatch (expected {want}, got {digest}); the download was deleted"
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
) -> int:
    while have < total:
        if cancel is not None and cancel.is_set():
            raise DownloadCancelled(
                f"{name}: cancelled at {have} of {total} bytes; run again to resume"
            )
        try:
            block = response.read(min(CHUNK, total - have))
        except (OSError, http.client.HTTPException) as exc:
            raise DownloadError(
                f"{name}: connection lost at {have} of {total} bytes ({exc}); run again to resume"
            ) from None
        if not block:
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
