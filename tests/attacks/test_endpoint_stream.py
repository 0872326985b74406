"""A hostile endpoint's streamed reply is capped in total bytes and total time, not just per line."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from frogdesk.engine.chat import ContentDelta, Finished, GenerationSettings, Message
from frogdesk.engine.openai.backend import OpenAIBackend
from frogdesk.engine.openai.stream import reply_byte_cap
from frogdesk.paths import AppPaths
from frogdesk.sessions.store import SessionStore
from tests.attacks.harness import frogdesk
from tests.support.e2e import changed_paths, make_user_repo, repo_state

CHUNK_TEXT = "x" * 3900
"""One SSE event of about 4 kB, as the red team sent."""
FLOOD_BYTES = 17_500_000


def _event(content: str, finish: str | None = None) -> bytes:
    choice: dict[str, Any] = {"index": 0, "delta": {"content": content}, "finish_reason": finish}
    return b"data: " + json.dumps({"choices": [choice]}).encode() + b"\n\n"


class Hostile(ThreadingHTTPServer):
    """An OpenAI-compatible server whose replies are `total` bytes of 4 kB events, or endless."""

    daemon_threads = True

    def __init__(self, total: int | None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.total = total
        """Bytes of content events before the reply ends; None: it never ends."""
        self.sent = 0
        """Bytes written into the socket for the last reply."""
        self.stopped = threading.Event()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Hostile

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        body = json.dumps({"data": [{"id": "hostile"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.server.sent = 0
        event = _event(CHUNK_TEXT)
        try:
            while self.server.total is None or self.server.sent < self.server.total:
                self.wfile.write(event)
                self.wfile.flush()
                self.server.sent += len(event)
                if self.server.total is None:
                    self.server.stopped.wait(0.01)  # a trickle: each read is well in time
            self.wfile.write(_event("", "stop") + b"data: [DONE]\n\n")
            self.wfile.flush()
        except OSError:
            pass  # the client hung up: what the caps are for
        finally:
            self.close_connection = True


@pytest.fixture
def hostile() -> Iterator[Hostile]:
    server = Hostile(FLOOD_BYTES)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.stopped.set()
    server.shutdown()
    server.server_close()


@dataclass
class _Got:
    """What the backend streamed: the content (joined once: the pieces can be megabytes)."""

    content: str
    end: Finished


def _reply(backend: OpenAIBackend, max_tokens: int = 8192) -> tuple[_Got, Finished]:
    """The whole reply and how it ended (thinking off: content streams as it comes)."""
    settings = GenerationSettings(max_tokens=max_tokens, enable_thinking=False)
    pieces: list[str] = []
    end: Finished | None = None
    for event in backend.generate([Message("user", "hi")], [], settings):
        if isinstance(event, ContentDelta):
            pieces.append(event.text)
        elif isinstance(event, Finished):
            end = event
    assert end is not None
    return _Got("".join(pieces), end), end


def test_a_flood_of_small_lines_is_stopped_at_the_total_cap(hostile: Hostile) -> None:
    cap = reply_byte_cap(8192)
    assert cap < FLOOD_BYTES
    # Positive control: with no total cap (the old behaviour), the flood is read whole.
    uncapped, end = _reply(OpenAIBackend(hostile.base, retries=0, reply_bytes=1 << 40))
    assert end.reason == "stop", end.error
    assert len(uncapped.content) >= FLOOD_BYTES * 0.9

    reply, end = _reply(OpenAIBackend(hostile.base, retries=0))
    assert end.reason == "error"
    assert f"over {cap:,} bytes in total" in end.error, end.error
    assert len(reply.content) <= cap  # what was kept stays within the cap too

    # Positive control: a reply under the cap, in the same 4 kB events, completes whole.
    hostile.total = cap // 2
    reply, end = _reply(OpenAIBackend(hostile.base, retries=0))
    assert end.reason == "stop", end.error
    assert reply.content == CHUNK_TEXT * (len(reply.content) // len(CHUNK_TEXT))
    assert len(reply.content) >= hostile.total * 0.9


def test_the_cap_follows_the_turn_budget(hostile: Hostile) -> None:
    """A smaller per-turn token budget means a smaller total: a 2 MB reply is too much for 512."""
    hostile.total = 2_000_000
    assert _reply(OpenAIBackend(hostile.base, retries=0))[1].reason == "stop"
    _, end = _reply(OpenAIBackend(hostile.base, retries=0), max_tokens=512)
    assert end.reason == "error"
    assert f"over {reply_byte_cap(512):,} bytes in total" in end.error


def test_a_stream_that_never_ends_is_stopped_at_the_time_cap(hostile: Hostile) -> None:
    hostile.total = None
    # The per-read timeout never fires: each event comes well within it.
    backend = OpenAIBackend(hostile.base, retries=0, reply_seconds=2.0, reply_bytes=1 << 40)
    reply, end = _reply(backend)
    assert end.reason == "error"
    assert "took over 2 s" in end.error, end.error
    assert reply.content  # what came before the cap is kept for the transcript

    # Positive control: the same events, ending, under a roomy time cap, complete.
    hostile.total = 40 * len(_event(CHUNK_TEXT))
    roomy = OpenAIBackend(hostile.base, retries=0, reply_seconds=600.0)
    assert _reply(roomy)[1].reason == "stop"


def test_a_run_on_a_flooding_endpoint_ends_clearly_and_keeps_its_session(
    hostile: Hostile, tmp_path: Path
) -> None:
    repo = make_user_repo(tmp_path)
    before = repo_state(repo)
    done = frogdesk(
        "run", "Do the task.", "--repo", str(repo), "--backend", "openai", "--endpoint",
        hostile.base, "--sandbox", "landlock", "--output", str(tmp_path / "out"), "--json",
        "--max-steps", "3", "--max-tokens-per-turn", "512",
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    assert "bytes in total" in done.stderr, done.stderr  # the user is told why
    summary = json.loads(done.stdout)
    assert summary["exit_reason"] != "agent"
    store = SessionStore(AppPaths.default().sessions_dir)
    record = store.get(str(summary["session_id"]))  # the session is on disk, resumable
    assert Path(record.worktree).is_dir()
    store.read_transcript(record.id)
    assert changed_paths(before, repo_state(repo)) == set()
    assert hostile.sent < FLOOD_BYTES  # the client stopped reading: the rest was never taken
