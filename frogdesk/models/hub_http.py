"""One bounded HTTP request to the Hub: capped reads and time, failures sorted into healing or not, no token leaks."""

from __future__ import annotations

import contextlib
import errno
import http.client
import json
import socket
import ssl
import threading
import urllib.error
import urllib.request
from types import TracebackType
from typing import IO, Any
from urllib.parse import urljoin, urlsplit

from frogdesk.models.errors import HubRequestError
from frogdesk.sizes import memory_size

MAX_JSON_BYTES = 32 << 20
"""Largest API reply read whole (a listing page of a huge repo is a few MB)."""
_NO_ROUTE = {errno.ENETUNREACH, errno.EHOSTUNREACH, errno.EADDRNOTAVAIL, errno.ENETDOWN}


def origin(url: str) -> tuple[str, str]:
    """(scheme, host:port) of a URL: a token goes only where both match."""
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


class SameOriginAuth(urllib.request.HTTPRedirectHandler):
    """Follow redirects, dropping the token unless scheme, host and port all stay the same.

    A redirect to a CDN (another host) or from https to http on the same host (a downgrade
    an attacker on the network can read) must not carry the user's token.
    """

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
        if new is not None and origin(newurl) != origin(req.full_url):
            new.remove_header("Authorization")
        return new


class RequestDeadline:
    """A time limit on whole requests (connection, headers, body), however slowly bytes drip.

    A socket timeout bounds each read, so a server sending a byte a second never trips it.
    When the time is up a timer shuts the watched connection down: the blocked read returns
    at once, and `expired` tells the caller why. 0 seconds means no limit.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def __enter__(self) -> RequestDeadline:
        if self.seconds > 0:
            self._timer = threading.Timer(self.seconds, self._expire)
            self._timer.name = "hub-request-deadline"
            self._timer.daemon = True
            self._timer.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._sock = None

    def watch(self, sock: socket.socket) -> None:
        """Shut this connection down when the time is up (at once if it already is)."""
        with self._lock:
            self._sock = sock
            if self.expired:
                _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            if self._sock is not None:
                _shut(self._sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed: nothing is waiting on it
        sock.shutdown(socket.SHUT_RDWR)


class _WatchedHTTP(http.client.HTTPConnection):
    """A connection whose socket a RequestDeadline can shut down."""

    def __init__(
        self, host: str, /, *, deadline: RequestDeadline | None = None, **kwargs: Any
    ) -> None:
        super().__init__(host, **kwargs)
        self._deadline = deadline

    def connect(self) -> None:
        super().connect()
        if self._deadline is not None:
            self._deadline.watch(self.sock)


class _WatchedHTTPS(_WatchedHTTP, http.client.HTTPSConnection):
    """The same over TLS (the TLS handshake itself is bounded by the socket timeout)."""


class _WatchedHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: RequestDeadline | None) -> None:
        super().__init__()
        self._deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_WatchedHTTP, req, deadline=self._deadline)


class _WatchedHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: RequestDeadline | None) -> None:
        super().__init__()
        self._deadline = deadline

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_WatchedHTTPS, req, deadline=self._deadline)


def open_url(
    url: str,
    *,
    token: str | None,
    timeout: float,
    headers: dict[str, str] | None = None,
    deadline: RequestDeadline | None = None,
) -> Any:
    """Open url (following redirects safely) with the token sent to the URL's own origin only.

    `timeout` bounds each read; `deadline`, when given, the whole exchange until it is left.
    """
    request = urllib.request.Request(url, headers={"User-Agent": "frogdesk", **(headers or {})})
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    opener = urllib.request.build_opener(
        SameOriginAuth(), _WatchedHTTPHandler(deadline), _WatchedHTTPSHandler(deadline)
    )
    return opener.open(request, timeout=timeout)


def describe_failure(exc: BaseException, host: str) -> tuple[str, bool]:
    """A short reason for a failed connection and whether it lasts (retrying soon cannot help)."""
    reason: object = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(reason, socket.gaierror):
        return f"the name {host.rsplit(':', 1)[0] or host} does not resolve", True
    if isinstance(reason, ConnectionRefusedError):
        return f"{host} refused the connection", True
    if isinstance(reason, ssl.SSLError):
        return f"TLS failed with {host} ({reason.reason or reason})", True
    if isinstance(reason, TimeoutError | socket.timeout):
        return f"{host} did not answer in time", False
    if isinstance(reason, OSError) and reason.errno in _NO_ROUTE:
        return f"no route to {host}", True
    text = str(reason).splitlines()[0] if str(reason) else type(reason).__name__
    return f"{host}: {text}", False


def _past(deadline: RequestDeadline | None, host: str) -> None:
    if deadline is not None and deadline.expired:
        raise HubRequestError(
            f"{host} did not finish answering within {deadline.seconds:g} s; gave up",
            lasting=True,  # it answered, too slowly for minutes: trying again soon will not help
        )


def get_json(
    url: str,
    *,
    token: str | None,
    timeout: float = 10.0,
    deadline: RequestDeadline | None = None,
) -> tuple[Any, Any]:
    """GET a JSON reply (at most MAX_JSON_BYTES) in one attempt: (data, response headers).

    `timeout` bounds each read, `deadline` (when given) the whole request, body included.
    """
    host = urlsplit(url).netloc
    _past(deadline, host)
    try:
        response = open_url(url, token=token, timeout=timeout, deadline=deadline)
    except urllib.error.HTTPError as exc:
        code = exc.headers.get("X-Error-Code", "") if exc.headers else ""
        transient = exc.code in (408, 429) or exc.code >= 500
        raise HubRequestError(
            f"HTTP {exc.code} from {host}", lasting=not transient, status=exc.code, code=code
        ) from None
    except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as exc:
        _past(deadline, host)
        text, lasting = describe_failure(exc, host)
        raise HubRequestError(text, lasting=lasting) from None
    with response:
        try:
            body = response.read(MAX_JSON_BYTES + 1)
        except (OSError, http.client.HTTPException) as exc:
            _past(deadline, host)
            text, _ = describe_failure(exc, host)
            raise HubRequestError(text, lasting=False) from None
        headers = response.headers
    _past(deadline, host)  # a cut-off body is no answer, even when it parses
    if len(body) > MAX_JSON_BYTES:
        raise HubRequestError(
            f"{host} sent a reply over {memory_size(MAX_JSON_BYTES)}; refused", lasting=True
        )
    try:
        return json.loads(body), headers
    except ValueError:
        raise HubRequestError(f"{host} sent a reply that is not JSON", lasting=True) from None
    except RecursionError:
        raise HubRequestError(
            f"{host} sent JSON nested too deeply to read; refused", lasting=True
        ) from None


def next_page(headers: Any, current: str) -> str | None:
    """The Link rel="next" URL, refused unless it stays on the current origin."""
    links: str = headers.get("Link") or ""
    for link in links.split(","):
        target, _, params = link.partition(";")
        if 'rel="next"' in params.replace(" ", ""):
            url = urljoin(current, target.strip().strip("<>"))
            if origin(url) != origin(current):
                raise HubRequestError(
                    f"the Hub's next page points to another origin ({urlsplit(url).netloc})",
                    lasting=True,
                )
            return str(url)
    return None
