"""The `openai` backend: any OpenAI-compatible `/v1/chat/completions` endpoint, streamed."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

from frogdesk.engine.chat import (
    BackendInfo,
    EngineEvent,
    Finished,
    GenerationSettings,
    Message,
    ToolCallError,
    ToolCallEvent,
    ToolSchema,
)
from frogdesk.engine.estimate import estimate_prompt_tokens
from frogdesk.engine.openai.errors import EndpointError, StreamError
from frogdesk.engine.openai.stream import (
    ChunkAssembler,
    bounded_lines,
    iter_sse_data,
    read_capped,
    reply_byte_cap,
    reply_time_cap,
    whole_reply_payload,
)
from frogdesk.engine.toolcall.dialect import XML, ToolCallDialect

VENDOR_TEMPERATURE = 0.6
"""The sampling temperature the vendor evaluated FrogNano with."""
_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
MAX_REPLY_BYTES = 16 << 20
"""Largest reply read whole (`/models`, a non-streamed completion) and longest stream line."""


class _RequestFailed(Exception):
    """A request failed for good; the message is shown to the user."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class _Cancelled(Exception):
    """The caller cancelled while the request was being made."""


def wire_message(message: Message) -> dict[str, Any]:
    """A message in the OpenAI chat format (tool-call arguments as a JSON string)."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.role == "assistant" and message.reasoning:
        out["reasoning_content"] = message.reasoning
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": call.id or f"call_{index}",
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": json.dumps(call.arguments, ensure_ascii=False),
                },
            }
            for index, call in enumerate(message.tool_calls)
        ]
    if message.role == "tool":
        out["tool_call_id"] = message.tool_call_id
        if message.name:
            out["name"] = message.name
    return out


def _server_message(body: bytes) -> str:
    text = body.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past what json.loads follows
        return text[:500] or "(empty body)"
    error = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(error, dict):
        return str(error.get("message") or error)[:500]
    return str(error)[:500]


class _StreamWatcher:
    """Shuts the socket down when `cancel` is set or the reply's deadline passes, so a
    blocked read returns at once; `expired` tells the two apart."""

    def __init__(
        self,
        cancel: threading.Event | None,
        conn: http.client.HTTPConnection,
        deadline: float | None = None,
    ) -> None:
        self._done = threading.Event()
        self._cancel = cancel
        self._conn = conn
        self._deadline = deadline
        self.expired = False
        """True once the deadline (time.monotonic) passed and the socket was shut."""
        self._thread: threading.Thread | None = None
        if cancel is not None or deadline is not None:
            self._thread = threading.Thread(target=self._watch, name="openai-watch", daemon=True)
            self._thread.start()

    def _watch(self) -> None:
        while not self._done.wait(0.05):
            late = self._deadline is not None and time.monotonic() >= self._deadline
            if late or (self._cancel is not None and self._cancel.is_set()):
                self.expired = late
                sock = self._conn.sock
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)
                return

    def stop(self) -> None:
        """Stop watching (the request is over)."""
        self._done.set()
        if self._thread is not None:
            self._thread.join()


class OpenAIBackend:
    """Streams replies from an OpenAI-compatible server (llama-server, SGLang, vLLM, ...).

    `endpoint` is the API base, e.g. `http://gpu:8000/v1` (a full `.../chat/completions`
    URL works too). The API key comes from `api_key` or the OPENAI_API_KEY environment
    variable. Connection failures and 429/5xx answers are retried `retries` times with
    exponential backoff, but only before any token has streamed. `strict_calls` False
    leaves argument checks to the tools (see `QwenXmlToolParser`). One reply is capped in
    total bytes and seconds (`reply_bytes`, `reply_seconds`; by default derived from the
    turn's token budget, see `reply_byte_cap`, `reply_time_cap`): past either it ends
    with an error that says which, and the session keeps what it had.
    """

    def __init__(
        self,
        endpoint: str,
        *,
        model: str = "",
        api_key: str | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 600.0,
        retries: int = 3,
        backoff: float = 0.5,
        strict_calls: bool = False,
        dialect: ToolCallDialect = XML,
        max_reply_bytes: int = MAX_REPLY_BYTES,
        reply_bytes: int | None = None,
        reply_seconds: float | None = None,
    ) -> None:
        parts = urlsplit(endpoint.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise EndpointError(
                f"the endpoint {endpoint!r} is not an http(s) URL such as http://localhost:8000/v1"
            )
        self.endpoint = endpoint.strip()
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        try:
            self._port = parts.port
        except ValueError:
            raise EndpointError(f"the endpoint {endpoint!r} has an invalid port") from None
        path = parts.path.rstrip("/")
        if path.endswith("/chat/completions"):
            path = path[: -len("/chat/completions")]
        self._base_path = path
        self._model = model
        self._api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._retries = max(retries, 0)
        self._backoff = backoff
        self._strict = strict_calls
        self._dialect = dialect
        self._max_reply = max_reply_bytes
        self._reply_bytes = reply_bytes
        """Total bytes of one reply; None derives it from the turn's max_tokens."""
        self._reply_seconds = reply_seconds
        """Total seconds of one reply; None derives it from the turn's max_tokens."""

    @property
    def host(self) -> str:
        """The endpoint's host (and port), as the status bar names it."""
        return f"{self._host}:{self._port}" if self._port else self._host

    @property
    def info(self) -> BackendInfo:
        """The server's model (once known) and the endpoint's host."""
        return BackendInfo(
            kind="openai",
            model=self._model or self.endpoint,
            device=self.host,
            dialect=self._dialect.name,
        )

    def server_model(self, cancel: threading.Event | None = None) -> str:
        """The configured model name, else the first one the server lists (asked once)."""
        try:
            return self._model_name(cancel)
        except _Cancelled:
            return self._model
        except _RequestFailed as exc:
            raise EndpointError(str(exc)) from None

    # HTTP ------------------------------------------------------------------------

    def _connection(self) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(
                self._host, self._port, timeout=self._connect_timeout
            )
        return http.client.HTTPConnection(self._host, self._port, timeout=self._connect_timeout)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _open(
        self, method: str, path: str, body: bytes | None, cancel: threading.Event | None
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """Send one request, retrying connection failures and 429/5xx answers."""
        url = self._url(path)
        attempt = 0
        while True:
            conn = self._connection()
            retryable = True
            status = 0
            try:
                conn.connect()
            except OSError as exc:
                failure = f"cannot connect to {url}: {exc.strerror or exc}"
            else:
                try:
                    if conn.sock is not None:
                        conn.sock.settimeout(self._read_timeout)
                    conn.request(method, self._base_path + path, body=body, headers=self._headers())
                    response = conn.getresponse()
                except TimeoutError:
                    conn.close()
                    raise _RequestFailed(
                        f"{url} did not answer within {self._read_timeout:g} s"
                    ) from None
                except (OSError, http.client.HTTPException) as exc:
                    failure = f"the connection to {url} failed: {exc}"
                else:
                    if response.status < 300:
                        return conn, response
                    status = response.status
                    failure = (
                        f"{url} answered HTTP {status}: {_server_message(response.read(4096))}"
                    )
                    retryable = status in _RETRY_STATUS
            conn.close()
            if not retryable or attempt >= self._retries:
                tries = f" (after {attempt + 1} attempts)" if attempt else ""
                raise _RequestFailed(failure + tries, status)
            delay = self._backoff * 2**attempt
            attempt += 1
            if cancel is not None:
                if cancel.wait(delay):
                    raise _Cancelled
            else:
                time.sleep(delay)

    def _url(self, path: str) -> str:
        scheme = "https" if self._https else "http"
        port = f":{self._port}" if self._port else ""
        return f"{scheme}://{self._host}{port}{self._base_path}{path}"

    def _model_name(self, cancel: threading.Event | None) -> str:
        """The configured model, else the first one the server lists at /models."""
        if self._model:
            return self._model
        conn, response = self._open("GET", "/models", None, cancel)
        try:
            body = read_capped(response, self._max_reply, f"the reply of {self._url('/models')}")
            data = json.loads(body)
            self._model = str(data["data"][0]["id"])
        except StreamError as exc:
            raise _RequestFailed(str(exc)) from None
        except (ValueError, KeyError, IndexError, TypeError):
            raise _RequestFailed(
                f"{self._url('/models')} did not list a model; set openai_model to the model's name"
            ) from None
        finally:
            conn.close()
        return self._model

    # Generation ------------------------------------------------------------------

    def request_body(
        self,
        model: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        settings: GenerationSettings,
    ) -> dict[str, Any]:
        """The JSON body of a streamed chat-completion request."""
        body: dict[str, Any] = {
            "model": model,
            "messages": [wire_message(m) for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": settings.max_tokens,
            "temperature": VENDOR_TEMPERATURE
            if settings.temperature is None
            else settings.temperature,
        }
        for key in ("top_p", "top_k", "min_p", "seed"):
            value = getattr(settings, key)
            if value is not None:
                body[key] = value
        if tools:
            body["tools"] = list(tools)
            body["tool_choice"] = settings.tool_choice
        if not settings.enable_thinking:
            body["chat_template_kwargs"] = {"enable_thinking": False}
        return body

    def generate(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        settings: GenerationSettings,
        cancel: threading.Event | None = None,
    ) -> Iterator[EngineEvent]:
        """Stream the server's reply as engine events; always ends with one `Finished`."""
        seconds = self._reply_seconds
        if seconds is None:
            seconds = reply_time_cap(settings.max_tokens)
        deadline = time.monotonic() + seconds
        try:
            model = self._model_name(cancel)
            body = json.dumps(self.request_body(model, messages, tools, settings)).encode()
            conn, response = self._open("POST", "/chat/completions", body, cancel)
        except _Cancelled:
            yield Finished("cancelled")
            return
        except _RequestFailed as exc:
            context = exc.status == 400 and "context" in str(exc).lower()
            yield Finished("max_context_len" if context else "error", error=str(exc))
            return
        yield from self._stream(conn, response, tools, settings, cancel, (deadline, seconds))

    def _stream(
        self,
        conn: http.client.HTTPConnection,
        response: http.client.HTTPResponse,
        tools: Sequence[ToolSchema],
        settings: GenerationSettings,
        cancel: threading.Event | None,
        cap: tuple[float, float],
    ) -> Iterator[EngineEvent]:
        assembler = ChunkAssembler(
            tools, thinking=settings.enable_thinking, strict=self._strict, dialect=self._dialect
        )
        deadline, seconds = cap
        watcher = _StreamWatcher(cancel, conn, deadline)
        total = self._reply_bytes
        if total is None:
            total = reply_byte_cap(settings.max_tokens)
        failure = ""
        called = False
        try:
            if response.getheader("Content-Type", "").startswith("application/json"):
                what = f"the reply of {self._url('/chat/completions')}"
                whole = read_capped(response, min(self._max_reply, total), what)
                payloads: Iterable[str] = [whole_reply_payload(whole)]
            else:
                payloads = iter_sse_data(bounded_lines(response, self._max_reply, total))
            for payload in payloads:
                if (cancel is not None and cancel.is_set()) or watcher.expired:
                    break
                for event in assembler.add(payload):
                    called = called or isinstance(event, ToolCallEvent | ToolCallError)
                    yield event
        except StreamError as exc:
            failure = f"{self._url('/chat/completions')}: {exc}"
        except (OSError, http.client.HTTPException) as exc:
            if not (cancel is not None and cancel.is_set()):
                failure = f"the stream from {self._url('/chat/completions')} broke: {exc}"
        finally:
            watcher.stop()
            conn.close()
        if watcher.expired:
            # Checked first: the shut socket reads as a broken stream or an early end.
            failure = (
                f"the reply from {self._url('/chat/completions')} took over {seconds:g} s "
                f"(the time cap for a turn of {settings.max_tokens:,} tokens); stopped"
            )
        if cancel is not None and cancel.is_set():
            yield Finished("cancelled", raw_text=assembler.raw_text())
            return
        if failure:
            yield Finished("error", error=failure, raw_text=assembler.raw_text())
            return
        if assembler.finish_reason is None:
            yield Finished(
                "error",
                error=f"the stream from {self._url('/chat/completions')} ended before the reply finished",
                raw_text=assembler.raw_text(),
            )
            return
        for event in assembler.finish():
            called = called or isinstance(event, ToolCallEvent | ToolCallError)
            yield event
        yield Finished(assembler.reason(called=called), raw_text=assembler.raw_text())

    def count_tokens(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> int:
        """An estimate (characters / 4): the server's tokenizer is not at hand."""
        return estimate_prompt_tokens(messages, tools)

    def close(self) -> None:
        """Nothing is held between requests."""
