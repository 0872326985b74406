"""The openai backend against a real HTTP server on 127.0.0.1 that streams chat-completion chunks."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from frogdesk.engine.chat import (
    Backend,
    EngineEvent,
    Finished,
    GenerationSettings,
    Message,
    ReasoningDelta,
    Reply,
    ToolCall,
    ToolSchema,
    Usage,
)
from frogdesk.engine.openai.backend import OpenAIBackend
from frogdesk.engine.openai.errors import EndpointError
from frogdesk.engine.toolcall.parser import render_tool_call_xml

READ: ToolSchema = {
    "type": "function",
    "function": {
        "name": "Read",
        "parameters": {
            "type": "object",
            "properties": {"file_path": {"type": "string"}, "offset": {"type": "integer"}},
            "required": ["file_path"],
        },
    },
}
MESSAGES = [
    Message("system", "sys"),
    Message("user", "task"),
    Message(
        "assistant",
        "",
        reasoning="earlier",
        tool_calls=(ToolCall("Read", {"file_path": "é.py"}, id="c9"),),
    ),
    Message("tool", "1. x", tool_call_id="c9"),
]


@dataclass
class Plan:
    """What the server answers to one chat-completion request."""

    status: int = 200
    events: list[Any] = field(default_factory=list)
    """SSE payloads: dicts are sent as JSON, strings as they are."""
    body: bytes = b""
    """The body of a non-200 answer."""
    done: bool = True
    hang_after: int | None = None
    """Stop after this many events and wait until the test ends (for cancellation)."""
    hang_before_headers: bool = False


class Server(ThreadingHTTPServer):
    """A scripted OpenAI-compatible server: each POST takes the next plan."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.plans: list[Plan] = []
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        self.models: list[str] = ["served-model"]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.requests.append({"path": self.path, "headers": dict(self.headers)})
        data = json.dumps({"object": "list", "data": [{"id": m} for m in self.server.models]})
        self._send(200, data.encode(), "application/json")

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length))
        self.server.requests.append(
            {"path": self.path, "headers": dict(self.headers), "body": body}
        )
        plan = self.server.plans.pop(0)
        if plan.hang_before_headers:
            self.server.release.wait(30)
            return
        if plan.status != 200:
            self._send(plan.status, plan.body, "application/json")
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for number, event in enumerate(plan.events):
            if plan.hang_after is not None and number == plan.hang_after:
                self.server.release.wait(30)
                self.close_connection = True
                return
            payload = event if isinstance(event, str) else json.dumps(event)
            self._chunk(f"data: {payload}\n\n".encode())
        if plan.done:
            self._chunk(b"data: [DONE]\n\n")
            self._chunk(b"")
        self.close_connection = True


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server()
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield srv
    srv.release.set()
    srv.shutdown()
    srv.server_close()


def chunk(
    delta: dict[str, Any] | None = None,
    finish: str | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
    }
    if usage is not None:
        out["choices"] = []
        out["usage"] = usage
    return out


def text_chunks(text: str, size: int = 5) -> list[dict[str, Any]]:
    return [chunk({"content": text[i : i + size]}) for i in range(0, len(text), size)]


def gather(backend: Backend, settings: GenerationSettings | None = None) -> Reply:
    reply = Reply()
    for event in backend.generate(MESSAGES, [READ], settings or GenerationSettings()):
        reply.add(event)
    return reply


def backend_for(server: Server, **kwargs: Any) -> OpenAIBackend:
    kwargs.setdefault("model", "frognano")
    kwargs.setdefault("backoff", 0.01)
    return OpenAIBackend(server.base, **kwargs)


def test_structured_tool_calls_and_reasoning(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server.plans.append(
        Plan(
            events=[
                chunk({"role": "assistant", "content": ""}),
                chunk({"reasoning_content": "\nLet me "}),
                chunk({"reasoning_content": "read."}),
                chunk({"content": "Reading both."}),
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_a",
                                "type": "function",
                                "function": {"name": "Read", "arguments": ""},
                            }
                        ]
                    }
                ),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"file_path": '}}]}),
                chunk(
                    {
                        "tool_calls": [
                            {"index": 0, "function": {"arguments": '"a.py", "offset": 2}'}}
                        ]
                    }
                ),
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 1,
                                "id": "call_b",
                                "function": {"name": "Read", "arguments": '{"file_path": "b.py"}'},
                            }
                        ]
                    }
                ),
                chunk(finish="tool_calls"),
                chunk(
                    usage={
                        "prompt_tokens": 100,
                        "completion_tokens": 20,
                        "prompt_tokens_details": {"cached_tokens": 80},
                    }
                ),
            ]
        )
    )
    reply = gather(backend_for(server))
    assert reply.reasoning == "Let me read."
    assert reply.content == "Reading both."
    assert reply.tool_calls == [
        ToolCall("Read", {"file_path": "a.py", "offset": 2}, id="call_a"),
        ToolCall("Read", {"file_path": "b.py"}, id="call_b"),
    ]
    assert reply.errors == []
    assert reply.usage == Usage(
        prompt_tokens=100, evaluated_tokens=20, reused_tokens=80, completion_tokens=20
    )
    assert reply.finish is not None and reply.finish.reason == "tool_calls"
    assert "<function=Read>" in reply.finish.raw_text
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    body = request["body"]
    assert body["model"] == "frognano" and body["stream"] is True
    assert body["temperature"] == 0.6 and body["max_tokens"] == 8192
    assert body["tools"] == [READ] and body["tool_choice"] == "auto"
    assert "chat_template_kwargs" not in body
    assert body["messages"][2] == {
        "role": "assistant",
        "content": "",
        "reasoning_content": "earlier",
        "tool_calls": [
            {
                "id": "c9",
                "type": "function",
                "function": {"name": "Read", "arguments": '{"file_path": "é.py"}'},
            }
        ],
    }
    assert body["messages"][3] == {"role": "tool", "content": "1. x", "tool_call_id": "c9"}


def test_plain_text_xml_calls_are_parsed_by_our_parser(server: Server) -> None:
    call = render_tool_call_xml(ToolCall("Read", {"file_path": "x <y>.py", "offset": 7}))
    raw = "I think.\n</think>\n\nLooking.\n" + call
    server.plans.append(Plan(events=[*text_chunks(raw, 3), chunk(finish="stop")]))
    reply = gather(backend_for(server, api_key=""))
    assert reply.reasoning == "I think."
    assert reply.content == "Looking."
    assert reply.tool_calls == [
        ToolCall("Read", {"file_path": "x <y>.py", "offset": 7}, id="call_0")
    ]
    assert reply.finish is not None and reply.finish.reason == "tool_calls"
    assert reply.finish.raw_text == raw
    assert "Authorization" not in server.requests[0]["headers"]


def test_server_split_reasoning_with_xml_in_content(server: Server) -> None:
    call = render_tool_call_xml(ToolCall("Read", {"file_path": "a"}))
    server.plans.append(
        Plan(
            events=[
                chunk({"reasoning": "hmm"}),
                *text_chunks("ok " + call, 4),
                chunk(finish="stop"),
            ]
        )
    )
    reply = gather(backend_for(server))
    assert (reply.reasoning, reply.content) == ("hmm", "ok")
    assert [c.arguments for c in reply.tool_calls] == [{"file_path": "a"}]


def test_unsplit_reply_without_think_close_is_content(server: Server) -> None:
    server.plans.append(Plan(events=[*text_chunks("Just the answer."), chunk(finish="stop")]))
    reply = gather(backend_for(server))
    assert (reply.reasoning, reply.content) == ("", "Just the answer.")
    assert reply.finish is not None and reply.finish.reason == "stop"


def test_thinking_disabled_is_sent_and_content_streams(server: Server) -> None:
    server.plans.append(Plan(events=[*text_chunks("Hi there"), chunk(finish="length")]))
    reply = gather(
        backend_for(server), GenerationSettings(enable_thinking=False, temperature=0.2, seed=5)
    )
    assert reply.content == "Hi there"
    assert reply.finish is not None and reply.finish.reason == "length"
    body = server.requests[0]["body"]
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert (body["temperature"], body["seed"]) == (0.2, 5)


def test_bad_structured_calls_become_errors(server: Server) -> None:
    server.plans.append(
        Plan(
            events=[
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "a",
                                "function": {"name": "Read", "arguments": '{"file_path": '},
                            }
                        ]
                    }
                ),
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 1,
                                "id": "b",
                                "function": {"name": "Delete", "arguments": "{}"},
                            }
                        ]
                    }
                ),
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 2,
                                "id": "c",
                                "function": {"name": "Read", "arguments": "[1]"},
                            }
                        ]
                    }
                ),
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 3,
                                "id": "d",
                                "function": {"name": "Read", "arguments": '{"path": "x"}'},
                            }
                        ]
                    }
                ),
                chunk(finish="tool_calls"),
            ]
        )
    )
    reply = gather(backend_for(server, strict_calls=True))
    assert reply.tool_calls == []
    messages = [e.error for e in reply.errors]
    assert "not valid JSON" in messages[0]
    assert "Unknown function 'Delete'" in messages[1]
    assert "must be a JSON object" in messages[2]
    assert (
        "unknown parameter 'path'" in messages[3]
        and "missing required parameter 'file_path'" in messages[3]
    )
    assert reply.finish is not None and reply.finish.reason == "tool_calls"


def test_retries_a_500_before_any_token(server: Server) -> None:
    server.plans += [
        Plan(status=500, body=b'{"error": {"message": "warming up"}}'),
        Plan(events=[chunk({"content": "</think>fine"}), chunk(finish="stop")]),
    ]
    reply = gather(backend_for(server))
    assert reply.content == "fine"
    assert len(server.requests) == 2


def test_persistent_500_is_a_clear_error(server: Server) -> None:
    server.plans += [
        Plan(status=503, body=b'{"error": {"message": "overloaded"}}') for _ in range(3)
    ]
    reply = gather(backend_for(server, retries=2))
    assert reply.finish is not None and reply.finish.reason == "error"
    assert "HTTP 503: overloaded (after 3 attempts)" in reply.finish.error
    assert len(server.requests) == 3


def test_client_errors_are_not_retried(server: Server) -> None:
    server.plans.append(Plan(status=401, body=b'{"error": {"message": "bad key"}}'))
    reply = gather(backend_for(server))
    assert reply.finish == Finished(
        "error", error=f"{server.base}/chat/completions answered HTTP 401: bad key"
    )
    assert len(server.requests) == 1


def test_context_overflow_maps_to_max_context_len(server: Server) -> None:
    message = b'{"error": {"message": "This model\'s maximum context length is 4096 tokens"}}'
    server.plans.append(Plan(status=400, body=message))
    reply = gather(backend_for(server))
    assert reply.finish is not None and reply.finish.reason == "max_context_len"
    assert "maximum context length" in reply.finish.error


def test_connection_refused_is_a_clear_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    backend = OpenAIBackend(f"http://127.0.0.1:{port}/v1", model="m", retries=1, backoff=0.01)
    reply = gather(backend)
    assert reply.finish is not None and reply.finish.reason == "error"
    assert f"cannot connect to http://127.0.0.1:{port}/v1/chat/completions" in reply.finish.error
    assert "refused" in reply.finish.error.lower() and "after 2 attempts" in reply.finish.error


def test_cancel_closes_a_stream_that_is_waiting(server: Server) -> None:
    server.plans.append(
        Plan(events=[chunk({"reasoning_content": "a"}), chunk({"content": "b"})], hang_after=1)
    )
    backend = backend_for(server)
    cancel = threading.Event()
    events: list[EngineEvent] = []
    for event in backend.generate(MESSAGES, [READ], GenerationSettings(), cancel):
        events.append(event)
        if isinstance(event, ReasoningDelta):
            setter = threading.Thread(target=cancel.set)
            setter.start()
            setter.join()
    assert events[0] == ReasoningDelta("a")
    assert isinstance(events[-1], Finished) and events[-1].reason == "cancelled"


def test_stream_that_stops_early_is_an_error(server: Server) -> None:
    server.plans.append(Plan(events=[chunk({"content": "</think>partial"})], done=False))
    reply = gather(backend_for(server))
    assert reply.finish is not None and reply.finish.reason == "error"
    assert "ended before the reply finished" in reply.finish.error or "broke" in reply.finish.error


def test_error_object_in_the_stream(server: Server) -> None:
    server.plans.append(Plan(events=[chunk({"content": "x"}), {"error": {"message": "boom"}}]))
    reply = gather(backend_for(server))
    assert reply.finish is not None and reply.finish.reason == "error"
    assert "the server reported an error: boom" in reply.finish.error


def test_garbage_in_the_stream(server: Server) -> None:
    server.plans.append(Plan(events=["not json at all"]))
    reply = gather(backend_for(server))
    assert reply.finish is not None and "not JSON" in reply.finish.error


def test_model_is_asked_from_the_server_when_unset(server: Server) -> None:
    server.plans.append(Plan(events=[chunk({"content": "</think>ok"}), chunk(finish="stop")]))
    backend = backend_for(server, model="")
    assert gather(backend).content == "ok"
    assert server.requests[0]["path"] == "/v1/models"
    assert server.requests[1]["body"]["model"] == "served-model"
    assert backend.info.model == "served-model"


def test_server_without_models_is_a_clear_error(server: Server) -> None:
    server.models = []
    reply = gather(backend_for(server, model=""))
    assert reply.finish is not None and reply.finish.reason == "error"
    assert "did not list a model; set openai_model" in reply.finish.error


def test_read_timeout_before_headers(server: Server) -> None:
    server.plans.append(Plan(hang_before_headers=True))
    reply = gather(backend_for(server, read_timeout=0.3))
    assert reply.finish is not None and reply.finish.reason == "error"
    assert "did not answer within 0.3 s" in reply.finish.error


def test_full_completions_url_is_accepted(server: Server) -> None:
    server.plans.append(Plan(events=[chunk({"content": "</think>ok"}), chunk(finish="stop")]))
    backend = OpenAIBackend(server.base + "/chat/completions/", model="m")
    assert gather(backend).content == "ok"
    assert server.requests[0]["path"] == "/v1/chat/completions"


@pytest.mark.parametrize(
    "endpoint", ["ftp://host/v1", "localhost:8000", "http://:80/v1", "http://h:99999/v1"]
)
def test_bad_endpoints_are_refused(endpoint: str) -> None:
    with pytest.raises(EndpointError):
        OpenAIBackend(endpoint)


def test_unsplit_content_with_a_call_and_no_think_close_is_content(server: Server) -> None:
    call = render_tool_call_xml(ToolCall("Read", {"file_path": "a"}))
    server.plans.append(
        Plan(events=[*text_chunks("Reading a. " + call, 6), chunk(finish="tool_calls")])
    )
    reply = gather(backend_for(server))
    assert (reply.reasoning, reply.content) == ("", "Reading a.")
    assert [c.arguments for c in reply.tool_calls] == [{"file_path": "a"}]


def test_sse_framing() -> None:
    from frogdesk.engine.openai.stream import iter_sse_data

    lines = [
        b": keep-alive\r\n",
        b"event: message\r\n",
        b'data: {"a":\r\n',
        b"data: 1}\r\n",
        b"\r\n",
        b"data:second\n",
        b"\n",
        b"data:[DONE]\n",
        b"\n",
        b"data: after done\n",
        b"\n",
    ]
    assert list(iter_sse_data(lines)) == ['{"a":\n1}', "second"]
    assert list(iter_sse_data([b"data: tail without blank line"])) == ["tail without blank line"]


def test_lenient_calls_pass_unknown_parameters_through(server: Server) -> None:
    server.plans.append(
        Plan(
            events=[
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "a",
                                "function": {"name": "Read", "arguments": '{"path": "x"}'},
                            }
                        ]
                    }
                ),
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 1,
                                "id": "b",
                                "function": {"name": "Read", "arguments": "{oops"},
                            }
                        ]
                    }
                ),
                chunk(finish="tool_calls"),
            ]
        )
    )
    reply = gather(backend_for(server))  # lenient is the default, as in Leaf
    # Leaf runs a call whose arguments are not a JSON object with no arguments.
    assert reply.tool_calls == [
        ToolCall("Read", {"path": "x"}, id="a"),
        ToolCall("Read", {}, id="b"),
    ]
    assert reply.errors == []


class _Oversized(Handler):
    """Answers /models and chat completions with bodies bigger than the client's cap."""

    def do_GET(self) -> None:
        padding = "x" * 5000
        body = json.dumps({"data": [{"id": "served-model", "pad": padding}]}).encode()
        self._send(200, body, "application/json")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        size = self.server.oversize  # type: ignore[attr-defined]
        message = {"role": "assistant", "content": "</think>" + "y" * size}
        body = json.dumps({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})
        self._send(200, body.encode(), "application/json")


@pytest.fixture
def oversized() -> Iterator[Server]:
    srv = Server()
    srv.RequestHandlerClass = _Oversized
    srv.oversize = 100  # type: ignore[attr-defined]
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_replies_read_whole_are_capped(oversized: Server) -> None:
    # positive control: under the cap the non-streamed reply and /models are read
    roomy = backend_for(oversized, model="", max_reply_bytes=100_000)
    assert gather(roomy).content == "y" * 100 and roomy.info.model == "served-model"
    tight = backend_for(oversized, model="", max_reply_bytes=1000)
    reply = gather(tight)
    assert reply.finish is not None and reply.finish.reason == "error"
    assert "/models is over 1,000 bytes; refused" in reply.finish.error
    oversized.oversize = 5000  # type: ignore[attr-defined]
    reply = gather(backend_for(oversized, model="fixed", max_reply_bytes=1000))
    assert reply.finish is not None and reply.finish.reason == "error"
    assert "chat/completions is over 1,000 bytes; refused" in reply.finish.error


def test_a_stream_line_without_end_is_capped(server: Server) -> None:
    server.plans.append(Plan(events=[chunk({"content": "</think>" + "z" * 5000})]))
    reply = gather(backend_for(server, max_reply_bytes=1000))
    assert reply.finish is not None and reply.finish.reason == "error"
    assert "a line over 1,000 bytes; refused" in reply.finish.error
    server.plans.append(
        Plan(events=[chunk({"content": "</think>" + "z" * 500}), chunk(finish="stop")])
    )
    assert gather(backend_for(server, max_reply_bytes=1000)).content == "z" * 500


def test_info_names_the_endpoint_host_and_the_server_model(server: Server) -> None:
    backend = backend_for(server, model="")
    port = server.server_address[1]
    assert backend.info.device == f"127.0.0.1:{port}"
    assert backend.server_model() == "served-model" and backend.info.model == "served-model"
