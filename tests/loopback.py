"""A real OpenAI-compatible HTTP server on 127.0.0.1 whose answers a test scripts.

Usage::

    def handler(body: dict, n: int) -> Reply:
        if n == 0:
            return Reply.error(429, "slow down", retry_after=0)
        return Reply.tool_call("find_user", {"name": "Maria Rossi"})

    with LoopbackServer(handler, models=["m1"]) as server:
        ...  # point a backend at server.base_url ("http://127.0.0.1:PORT/v1")
    assert server.bodies[1]["model"] == "m1"

- ``POST /v1/chat/completions`` calls ``handler(body, n)``, where ``body`` is the
  decoded JSON request and ``n`` the 0-based index of that chat request; the
  :class:`Reply` it returns is sent (a handler that raises answers 500 and lands
  in ``server.errors``).
- ``GET /v1/models`` lists ``models``; any other path answers 404.
- ``server.requests`` holds every request received (:class:`Received`: method,
  path, lower-cased headers, JSON body), ``server.bodies`` the chat bodies only.
- The server speaks HTTP/1.1 with keep-alive, one thread per connection, so many
  requests may run at once. It answers at most ``max_requests`` requests (the
  rest get 503) and, on leaving the ``with`` block, closes every connection and
  cuts any scripted delay short.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["Handler", "LoopbackServer", "Received", "Reply"]

Arguments = str | Mapping[str, Any]
_MAX_REQUEST_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Reply:
    """What the server answers to one chat request: a completion, an error, raw bytes, or a dropped connection."""

    status: int = 200
    content: str | None = None
    tool_calls: tuple[tuple[str, Arguments], ...] = ()
    """``(name, arguments)``: a string is sent as it is (even invalid JSON), a mapping as a JSON string."""
    object_arguments: bool = False
    """Send mapping arguments as JSON objects instead of strings, as some servers do."""
    reasoning_content: str | None = None
    usage: tuple[int, int] | None = (12, 7)
    """``(prompt_tokens, completion_tokens)``, or ``None`` to send no ``usage`` at all."""
    message: str = ""
    """The error message, for a status of 400 or more."""
    retry_after: str | None = None
    raw: bytes | None = None
    """A body sent verbatim instead of a rendered one."""
    content_type: str = "application/json"
    delay: float = 0.0
    """Seconds to wait before answering."""
    disconnect: bool = False
    """Close the connection without answering."""

    @classmethod
    def text(
        cls, content: str | None, *, reasoning: str | None = None, usage: tuple[int, int] | None = (12, 7)
    ) -> Reply:
        """A plain answer (``content`` may be ``None``), optionally with ``reasoning_content``."""
        return cls(content=content, reasoning_content=reasoning, usage=usage)

    @classmethod
    def tool_call(cls, name: str, arguments: Arguments, *, content: str | None = None, **kw: Any) -> Reply:
        """An answer with one tool call."""
        return cls(content=content, tool_calls=((name, arguments),), **kw)

    @classmethod
    def error(cls, status: int, message: str, *, retry_after: float | str | None = None, delay: float = 0.0) -> Reply:
        """An OpenAI-style error answer, with a ``Retry-After`` header when ``retry_after`` is given."""
        header = None if retry_after is None else str(retry_after)
        return cls(status=status, message=message, retry_after=header, delay=delay)

    @classmethod
    def body(cls, raw: bytes, *, status: int = 200, content_type: str = "application/json") -> Reply:
        """Exactly these bytes as the body."""
        return cls(status=status, raw=raw, content_type=content_type)

    @classmethod
    def drop(cls) -> Reply:
        """Close the connection without a response."""
        return cls(disconnect=True)

    def render(self, model: str, n: int) -> bytes:
        """The response body for this reply."""
        if self.raw is not None:
            return self.raw
        if self.status >= 400:
            error = {"message": self.message, "type": "invalid_request_error", "code": self.status}
            return json.dumps({"error": error}).encode()
        data: dict[str, Any] = {
            "id": f"chatcmpl-loopback-{n}",
            "object": "chat.completion",
            "created": 1700000000,
            "model": model,
            "choices": [{"index": 0, "message": self._message(), "finish_reason": self._finish()}],
        }
        if self.usage is not None:
            prompt, completion = self.usage
            data["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        return json.dumps(data, ensure_ascii=False).encode()

    def _message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.reasoning_content is not None:
            message["reasoning_content"] = self.reasoning_content
        if self.tool_calls:
            message["tool_calls"] = [self._call(i, name, args) for i, (name, args) in enumerate(self.tool_calls)]
        return message

    def _call(self, index: int, name: str, arguments: Arguments) -> dict[str, Any]:
        if not isinstance(arguments, str) and not self.object_arguments:
            arguments = json.dumps(arguments, ensure_ascii=False)
        return {"id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": arguments}}

    def _finish(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"


Handler = Callable[[dict[str, Any], int], Reply]


@dataclass(frozen=True)
class Received:
    """One request the server received."""

    method: str
    path: str
    headers: Mapping[str, str]
    """Header names lower-cased."""
    body: Any = None
    """The decoded JSON body, or ``None``."""


@dataclass
class _State:
    handler: Handler
    models: Sequence[str]
    max_requests: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    requests: list[Received] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)
    chats: int = 0
    connections: set[socket.socket] = field(default_factory=set)


class LoopbackServer:
    """An OpenAI-compatible server on 127.0.0.1 at a free port, serving from a background thread."""

    def __init__(
        self,
        handler: Handler | None = None,
        models: Sequence[str] = ("m1",),
        *,
        max_requests: int = 1000,
    ) -> None:
        self._state = _State(handler or (lambda body, n: Reply.text("ok")), list(models), max_requests)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        if self._server is None:
            raise RuntimeError("the loopback server is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def requests(self) -> list[Received]:
        """Every request received so far, in arrival order (a copy)."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of the chat-completion requests received so far."""
        return [r.body for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions the handler raised."""
        with self._state.lock:
            return list(self._state.errors)

    def __enter__(self) -> LoopbackServer:
        server = _Server(("127.0.0.1", 0), _RequestHandler)
        server.state = self._state
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop serving, close every open connection and wait for the server thread."""
        if self._server is None:
            return
        self._state.stopping.set()
        self._server.shutdown()
        with self._state.lock:
            for conn in self._state.connections:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    state: _State


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10
    server: _Server

    def setup(self) -> None:
        super().setup()
        with self.server.state.lock:
            self.server.state.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.state.lock:
            self.server.state.connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet."""

    @property
    def route(self) -> str:
        """The request's path without its query (a base URL may carry one)."""
        return self.path.partition("?")[0]

    def do_GET(self) -> None:
        """Models list, or 404."""
        if not self._admit(None):
            return
        if self.route.rstrip("/") == "/v1/models":
            data = [{"id": m, "object": "model", "owned_by": "loopback"} for m in self.server.state.models]
            self._send(200, json.dumps({"object": "list", "data": data}).encode())
        else:
            self._send(404, _error_body(f"no route for GET {self.path}"))

    def do_POST(self) -> None:
        """Chat completions through the handler, or 404."""
        length = int(self.headers.get("content-length") or 0)
        if length > _MAX_REQUEST_BYTES:
            self.close_connection = True
            self._send(413, _error_body("request too large"))
            return
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        if not self._admit(body):
            return
        if self.route != "/v1/chat/completions" or not isinstance(body, dict):
            self._send(404 if isinstance(body, dict) else 400, _error_body(f"cannot serve POST {self.path}"))
            return
        self._reply(body)

    def _admit(self, body: Any) -> bool:
        state = self.server.state
        with state.lock:
            state.requests.append(
                Received(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            over = len(state.requests) > state.max_requests
        if over:
            self.close_connection = True
            self._send(503, _error_body(f"loopback: more than {state.max_requests} requests"))
        return not over

    def _reply(self, body: dict[str, Any]) -> None:
        state = self.server.state
        with state.lock:
            n = state.chats
            state.chats += 1
        try:
            reply = state.handler(body, n)
        except Exception as exc:
            with state.lock:
                state.errors.append(exc)
            self._send(500, _error_body(f"loopback handler failed: {exc!r}"))
            return
        if reply.delay and state.stopping.wait(reply.delay):
            self.close_connection = True
            return
        if reply.disconnect:
            self.close_connection = True
            return
        extra = {"Retry-After": reply.retry_after} if reply.retry_after is not None else {}
        model = str(body.get("model", ""))
        self._send(reply.status, reply.render(model, n), reply.content_type, extra)

    def _send(
        self,
        status: int,
        payload: bytes,
        content_type: str = "application/json",
        extra: Mapping[str, str] | None = None,
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except OSError:  # the client went away (a timeout on its side)
            self.close_connection = True


def _error_body(message: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode()
