"""A small stand-in of the Hugging Face Hub on 127.0.0.1: the tree API and resolve with ranges."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

COMMIT = "0123456789abcdef0123456789abcdef01234567"
REPO = "bartowski/microsoft_FrogNano-4B-2609-GGUF"
"""The stand-in Hub's FrogNano repository."""
PREFIX = "microsoft_FrogNano-4B-2609"
"""The file-name prefix of REPO's quants."""


def git_blob_sha1(data: bytes) -> str:
    """The git blob id of these bytes."""
    return hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()


@dataclass
class HubRepo:
    """One repo's files: path -> bytes; files over `lfs_min` bytes are listed as LFS objects."""

    files: dict[str, bytes]
    lfs_min: int = 1024


@dataclass
class HubState:
    """What the server serves and what it has seen; tests change it while the server runs."""

    repos: dict[str, HubRepo] = field(default_factory=dict)
    bytes_per_second: float = 0.0
    """Throttle for resolve bodies; 0 serves at full speed."""
    step: int = 16384
    """Bytes written at a time (the throttle sleeps after each)."""
    fail_api: list[int] = field(default_factory=list)
    """HTTP statuses answered to the next API requests, one each (a Hub having a bad minute)."""
    corrupt: set[str] = field(default_factory=set)
    """Paths whose served bytes differ from the listed sha256 (one byte flipped)."""
    drop_after: dict[str, int] = field(default_factory=dict)
    """Paths whose body is cut after this many bytes of one response (a lost connection)."""
    ignore_range: bool = False
    """Answer ranged requests with the whole file (200), as some mirrors do."""
    token: str | None = None
    cdn_host: str = ""
    """When set (e.g. `localhost:PORT`), LFS files redirect there, as the Hub sends them to its CDN."""
    authorization_seen: list[tuple[str, bool]] = field(default_factory=list)
    """(path, whether an Authorization header came) of every request."""
    """When set, every request must carry `Authorization: Bearer <token>`."""
    served: dict[str, int] = field(default_factory=dict)
    """Body bytes sent per file path by resolve GETs."""
    served_by_range: dict[tuple[str, str], int] = field(default_factory=dict)
    """Body bytes sent per (file path, Range header)."""
    requests: list[tuple[str, str, str]] = field(default_factory=list)
    """(method, path, Range header) of every request."""
    page_size: int = 0
    """Tree entries per page, linked by `Link: rel="next"` as the Hub pages them; 0: one page."""
    pages: str = ""
    """With page_size: `loop` links every page back to itself, `endless` never stops linking."""
    tree_body: bytes | None = None
    """When set, the tree API answers with these bytes as they are (a broken or hostile Hub)."""
    drip: str = ""
    """`api`: API replies promise 32 MiB and send one space per drip_pause; `headers`: resolve
    answers send their headers one byte per drip_pause. Either until the client hangs up."""
    drip_pause: float = 0.05
    drip_for: float = 60.0
    """The most seconds one dripping answer goes on (so the server can always stop)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def tree(self, repo: str) -> list[dict[str, object]]:
        """The tree API's entries (directories and files, recursive)."""
        entries: list[dict[str, object]] = []
        dirs: set[str] = set()
        for path, data in sorted(self.repos[repo].files.items()):
            parts = path.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                d = "/".join(parts[:i])
                if d not in dirs:
                    dirs.add(d)
                    entries.append(
                        {
                            "type": "directory",
                            "oid": git_blob_sha1(d.encode()),
                            "size": 0,
                            "path": d,
                        }
                    )
            entry: dict[str, object] = {
                "type": "file",
                "oid": git_blob_sha1(data),
                "size": len(data),
                "path": path,
            }
            if len(data) >= self.repos[repo].lfs_min:
                entry["lfs"] = {
                    "oid": hashlib.sha256(data).hexdigest(),
                    "size": len(data),
                    "pointerSize": 134,
                }
            entries.append(entry)
        return entries


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _json(self, status: int, payload: object, link: str = "") -> None:
        self._body(status, json.dumps(payload).encode(), link)

    def _body(self, status: int, body: bytes, link: str = "") -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if link:
            self.send_header("Link", f'<{link}>; rel="next"')
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _drip(self, head: bytes, byte: bytes) -> None:
        """Send head, then one byte at a time until the client hangs up (or drip_for ends)."""
        state = self.server.state
        self.close_connection = True
        end = time.monotonic() + state.drip_for
        try:
            self.wfile.write(head)
            while time.monotonic() < end:
                self.wfile.write(byte)
                time.sleep(state.drip_pause)
        except OSError:  # the client hung up
            pass

    def _tree_page(self, entries: list[dict[str, object]]) -> None:
        """All entries, or with page_size one page of them and a link to the next."""
        state = self.server.state
        if state.tree_body is not None:
            self._body(200, state.tree_body)
            return
        size = state.page_size
        if not size:
            self._json(200, entries)
            return
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        cursor = int(query.get("cursor", ["0"])[0])
        query["cursor"] = [str(cursor + size)]
        following = (
            self.path if state.pages == "loop" else f"{url.path}?{urlencode(query, doseq=True)}"
        )
        more = state.pages in ("loop", "endless") or cursor + size < len(entries)
        link = f"http://{self.headers['Host']}{following}" if more else ""
        self._json(200, entries[cursor : cursor + size], link)

    def _authorized(self) -> bool:
        token = self.server.state.token
        if token is None or self.headers.get("Authorization") == f"Bearer {token}":
            return True
        self._json(401, {"error": "Invalid credentials"})
        return False

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        state = self.server.state
        url = urlsplit(self.path)
        path = unquote(url.path)
        with state.lock:
            state.requests.append((self.command, path, self.headers.get("Range", "")))
            state.authorization_seen.append((path, "Authorization" in self.headers))
        if path.startswith("/cdn/"):
            self._resolve(path.removeprefix("/cdn/"), from_cdn=True)
            return
        if not self._authorized():
            return
        if path.startswith("/api/models/") and state.fail_api:
            with state.lock:
                status = state.fail_api.pop(0)
            self._json(status, {"error": "try later"})
        elif path.startswith("/api/models/") and state.drip == "api":
            self._drip(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: 33554432\r\n\r\n",
                b" ",
            )
        elif path.startswith("/api/models/"):
            self._api(path.removeprefix("/api/models/"), parse_qs(url.query))
        elif "/resolve/" in path:
            self._resolve(path.lstrip("/"))
        else:
            self._json(404, {"error": "not found"})

    def _api(self, rest: str, query: dict[str, list[str]]) -> None:
        state = self.server.state
        owner, name, *tail = rest.split("/")
        repo = f"{owner}/{name}"
        if repo not in state.repos:
            self.send_response(404)
            self.send_header("X-Error-Code", "RepoNotFound")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if tail and tail[0] == "tree":
            prefix = "/".join(tail[2:])
            entries = [e for e in state.tree(repo) if str(e["path"]).startswith(prefix)]
            if query.get("recursive", ["false"])[0].lower() != "true":
                depth = prefix.count("/") + (1 if prefix else 0)
                entries = [e for e in entries if str(e["path"]).count("/") == depth]
            self._tree_page(entries)
        elif tail and tail[0] == "revision":
            siblings = [{"rfilename": p} for p in sorted(state.repos[repo].files)]
            self._json(200, {"id": repo, "sha": COMMIT, "siblings": siblings})
        else:
            self._json(200, {"id": repo, "sha": COMMIT})

    def _resolve(self, rest: str, from_cdn: bool = False) -> None:
        state = self.server.state
        if state.drip == "headers":
            self._drip(b"HTTP/1.1 200 OK\r\nX-Drip: ", b"a")
            return
        repo_part, _, after = rest.partition("/resolve/")
        _revision, _, file_path = after.partition("/")
        repo = state.repos.get(repo_part)
        if repo is None or file_path not in repo.files:
            self.send_response(404)
            self.send_header("X-Error-Code", "EntryNotFound" if repo else "RepoNotFound")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = repo.files[file_path]
        if state.cdn_host and not from_cdn and len(data) >= repo.lfs_min and self.command == "GET":
            self.send_response(302)
            self.send_header("Location", f"http://{state.cdn_host}/cdn/{rest}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        etag = (
            hashlib.sha256(data).hexdigest() if len(data) >= repo.lfs_min else git_blob_sha1(data)
        )
        if file_path in state.corrupt:
            data = data[:-1] + bytes([data[-1] ^ 0xFF])
        start = 0
        range_header = self.headers.get("Range", "")
        if range_header.startswith("bytes=") and not state.ignore_range:
            start = int(range_header.removeprefix("bytes=").split("-")[0])
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(len(data) - start))
        self.send_header("ETag", f'"{etag}"')
        self.send_header("X-Repo-Commit", COMMIT)
        if len(data) >= repo.lfs_min:
            self.send_header("X-Linked-Etag", f'"{etag}"')
            self.send_header("X-Linked-Size", str(len(data)))
        self.end_headers()
        if self.command == "HEAD":
            return
        self._send_body(file_path, data[start:], range_header)

    def _send_body(self, file_path: str, body: bytes, range_header: str) -> None:
        state = self.server.state
        cut = state.drop_after.pop(file_path, None)
        if cut is not None:
            body = body[:cut]
            self.close_connection = True
        step = state.step
        for offset in range(0, len(body), step):
            piece = body[offset : offset + step]
            try:
                self.wfile.write(piece)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                return
            with state.lock:
                state.served[file_path] = state.served.get(file_path, 0) + len(piece)
                key = (file_path, range_header)
                state.served_by_range[key] = state.served_by_range.get(key, 0) + len(piece)
            if state.bytes_per_second:
                time.sleep(len(piece) / state.bytes_per_second)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: HubState) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


@dataclass
class RunningHub:
    """A started server: its endpoint URL and its state."""

    endpoint: str
    state: HubState
    server: _Server | None = None

    def stop(self) -> None:
        """Stop serving and free the port (the block's end then has nothing left to do)."""
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


@contextmanager
def serve_hub(state: HubState) -> Iterator[RunningHub]:
    """Run the stand-in Hub on a free port of 127.0.0.1 until the block ends."""
    server = _Server(state)
    thread = threading.Thread(target=server.serve_forever, name="hub-server", daemon=True)
    thread.start()
    try:
        yield RunningHub(f"http://127.0.0.1:{server.server_address[1]}", state, server)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def bartowski_layout(
    quants: dict[str, Path], split: list[Path], prefix: str = "microsoft_FrogNano-4B-2609"
) -> dict[str, bytes]:
    """A repo laid out like bartowski's: one file per quant, a split Q8_0 in its folder, an mmproj."""
    files: dict[str, bytes] = {}
    for quant, path in quants.items():
        if quant == "Q8_0":
            continue
        label = quant.lower() if quant in {"F16", "BF16"} else quant
        files[f"{prefix}-{label}.gguf"] = path.read_bytes()
    count = len(split)
    for index, part in enumerate(split, start=1):
        files[f"{prefix}-Q8_0/{prefix}-Q8_0-{index:05d}-of-{count:05d}.gguf"] = part.read_bytes()
    files[f"mmproj-{prefix}-f16.gguf"] = quants["F16"].read_bytes()[:4096]
    files["README.md"] = b"---\nlicense: mit\npipeline_tag: image-text-to-text\n---\n# quants\n"
    files[".gitattributes"] = b"*.gguf filter=lfs diff=lfs merge=lfs -text\n"
    return files
