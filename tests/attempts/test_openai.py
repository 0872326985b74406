"""Attempts on the openai backend: N concurrent requests to one real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from frogdesk import config
from frogdesk.attempts.service import run_attempts
from frogdesk.attempts.spec import AttemptsSpec
from frogdesk.paths import AppPaths
from frogdesk.sessions.service import SessionService
from tests.support.scripted import make_repo

N = 3


class BatchingServer(ThreadingHTTPServer):
    """Answers a chat completion only once N requests are in flight together, as a server
    batching N sequences would see them; a request that waits in vain is answered 503."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.barrier = threading.Barrier(N, timeout=60)
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most = 0
        self.seeds: list[Any] = []


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: BatchingServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._send(200, json.dumps({"data": [{"id": "m"}]}).encode(), "application/json")

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        srv = self.server
        with srv.lock:
            srv.in_flight += 1
            srv.most = max(srv.most, srv.in_flight)
            srv.seeds.append(body.get("seed"))
        try:
            srv.barrier.wait()
        except threading.BrokenBarrierError:
            self._send(503, b'{"error": {"message": "alone"}}', "application/json")
            return
        finally:
            with srv.lock:
                srv.in_flight -= 1
        chunks = [
            {"choices": [{"index": 0, "delta": {"content": "Nothing to change."}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        self._send(200, data.encode(), "text/event-stream")
        self.close_connection = True


@pytest.fixture
def server() -> Iterator[BatchingServer]:
    srv = BatchingServer()
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield srv
    srv.barrier.abort()
    srv.shutdown()
    srv.server_close()


def test_attempts_send_their_requests_concurrently(
    tmp_path: Path, server: BatchingServer, sandboxed_bash: str
) -> None:
    repo = make_repo(tmp_path)
    endpoint = f"http://127.0.0.1:{server.server_address[1]}/v1"
    paths = AppPaths.default()
    settings = config.load(paths.config_file, environ={}, overrides={"seed": 5})
    outcome = run_attempts(
        SessionService(paths, settings),
        AttemptsSpec("t", repo, N, backend="openai", model="m", endpoint=endpoint, check=""),
    )
    assert [a.exit_reason for a in outcome.attempts] == ["agent"] * N, outcome
    assert server.most == N
    assert sorted(server.seeds) == [5, 6, 7]
