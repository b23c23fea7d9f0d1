"""A real HTTP server on 127.0.0.1 that speaks Ollama's native API, with answers a test scripts (standard library only).

Usage::

    def handler(body: dict, n: int) -> OllamaReply:
        if body.get("think") not in (None, False):
            return OllamaReply.failure(400, '"m1" does not support thinking')
        return OllamaReply.tool_call("get_weather", {"city": "Rome"})

    with OllamaServer(handler, models=["m1"]) as server:
        ...  # point the backend at server.base_url ("http://127.0.0.1:PORT")
    assert server.chats[0]["stream"] is False

- ``POST /api/chat`` calls ``handler(body, n)`` (``n``: 0-based index of the chat
  request) and sends the :class:`OllamaReply` it returns, rendered as Ollama
  renders a non-streamed answer; a handler that raises answers 500 and lands in
  ``server.errors``.
- ``GET /api/tags`` lists ``models`` (digest ``sha256-NAME``), ``GET /api/version``
  says 0.12.3, ``POST /api/show`` gives the first model the ``tools`` capability
  and the others not; any other path answers 404 ``{"error": ...}``.
- At most ``max_requests`` requests are answered (the rest get 503); leaving the
  ``with`` block stops the server, closes every connection and joins its thread.
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

__all__ = ["OllamaReply", "OllamaServer"]

_MAX_REQUEST_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class OllamaReply:
    """One answer of ``/api/chat``: a message (content, thinking, tool calls) with counts, or an error."""

    status: int = 200
    content: str = ""
    thinking: str | None = None
    tool_calls: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    """``(name, arguments)``: arguments are sent as a JSON object, as Ollama does."""
    call_ids: bool = False
    """Give each tool call an ``id``, as newer servers do."""
    prompt_eval_count: int | None = 12
    eval_count: int | None = 7
    """Tokens generated; ``None`` sends no counts at all."""
    eval_duration: int | None = 350_000_000
    """Nanoseconds spent generating."""
    error: str = ""
    raw: bytes | None = None
    """A body sent verbatim instead of a rendered one."""

    @classmethod
    def text(cls, content: str, *, thinking: str | None = None, **kw: Any) -> OllamaReply:
        """A plain answer, optionally with the model's thinking."""
        return cls(content=content, thinking=thinking, **kw)

    @classmethod
    def tool_call(cls, name: str, arguments: Mapping[str, Any], **kw: Any) -> OllamaReply:
        """An answer with one tool call."""
        return cls(tool_calls=((name, arguments),), **kw)

    @classmethod
    def failure(cls, status: int, error: str) -> OllamaReply:
        """An error answer, ``{"error": "..."}`` as Ollama sends it."""
        return cls(status=status, error=error)

    def render(self, model: str) -> bytes:
        """The response body."""
        if self.raw is not None:
            return self.raw
        if self.status >= 400:
            return json.dumps({"error": self.error}).encode()
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.thinking is not None:
            message["thinking"] = self.thinking
        if self.tool_calls:
            message["tool_calls"] = [self._call(i, name, args) for i, (name, args) in enumerate(self.tool_calls)]
        data: dict[str, Any] = {
            "model": model,
            "created_at": "2025-01-01T00:00:00.000000Z",
            "message": message,
            "done_reason": "stop",
            "done": True,
            "total_duration": 500_000_000,
            "load_duration": 1_000_000,
        }
        if self.eval_count is not None:
            data.update(prompt_eval_count=self.prompt_eval_count, prompt_eval_duration=40_000_000)
            data.update(eval_count=self.eval_count, eval_duration=self.eval_duration)
        return json.dumps(data, ensure_ascii=False).encode()

    def _call(self, index: int, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        call: dict[str, Any] = {"function": {"name": name, "arguments": dict(arguments)}}
        if self.call_ids:
            call = {"id": f"call_srv{index}", "function": {"index": index, **call["function"]}}
        return call


Handler = Callable[[dict[str, Any], int], OllamaReply]


@dataclass
class _State:
    handler: Handler
    models: Sequence[str]
    max_requests: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    requests: list[tuple[str, str, Any]] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)
    chats: int = 0
    connections: set[socket.socket] = field(default_factory=set)


class OllamaServer:
    """An Ollama-speaking server on 127.0.0.1 at a free port, serving from a background thread."""

    def __init__(
        self, handler: Handler | None = None, models: Sequence[str] = ("m1",), *, max_requests: int = 1000
    ) -> None:
        self._state = _State(handler or (lambda body, n: OllamaReply.text("ok")), list(models), max_requests)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``, the server root."""
        if self._server is None:
            raise RuntimeError("the server is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def requests(self) -> list[tuple[str, str, Any]]:
        """Every request received: ``(method, path, JSON body or None)``, in arrival order."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def chats(self) -> list[dict[str, Any]]:
        """The JSON bodies of the ``/api/chat`` requests received (a request cut short by its client has none)."""
        return [b for m, p, b in self.requests if (m, p) == ("POST", "/api/chat") and isinstance(b, dict)]

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions the handler raised."""
        with self._state.lock:
            return list(self._state.errors)

    def __enter__(self) -> OllamaServer:
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
        self._server.shutdown()
        with self._state.lock:
            for conn in self._state.connections:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
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

    def do_GET(self) -> None:
        """The model list, or 404."""
        if not self._admit(None):
            return
        if self.path == "/api/tags":
            models = [
                {"name": m, "model": m, "size": 1, "digest": f"sha256-{m}", "details": {"format": "gguf"}}
                for m in self.server.state.models
            ]
            self._send(200, json.dumps({"models": models}).encode())
        elif self.path == "/api/version":
            self._send(200, b'{"version": "0.12.3"}')
        else:
            self._send(404, json.dumps({"error": f"no route for GET {self.path}"}).encode())

    def do_POST(self) -> None:
        """A chat answer from the handler, or 404."""
        length = int(self.headers.get("content-length") or 0)
        if length > _MAX_REQUEST_BYTES:
            self.close_connection = True
            self._send(413, b'{"error": "request too large"}')
            return
        try:
            body = json.loads(self.rfile.read(length) or b"null")
        except ValueError:
            body = None
        if not self._admit(body):
            return
        if self.path == "/api/show" and isinstance(body, dict):
            tools = "tools" if body.get("model") in self.server.state.models[:1] else "insert"
            self._send(200, json.dumps({"details": {"format": "gguf"}, "capabilities": ["completion", tools]}).encode())
            return
        if self.path != "/api/chat" or not isinstance(body, dict):
            self._send(
                404 if isinstance(body, dict) else 400, json.dumps({"error": f"cannot serve {self.path}"}).encode()
            )
            return
        state = self.server.state
        with state.lock:
            n = state.chats
            state.chats += 1
        try:
            reply = state.handler(body, n)
        except Exception as exc:
            with state.lock:
                state.errors.append(exc)
            self._send(500, json.dumps({"error": f"handler failed: {exc!r}"}).encode())
            return
        self._send(reply.status, reply.render(str(body.get("model", ""))))

    def _admit(self, body: Any) -> bool:
        state = self.server.state
        with state.lock:
            state.requests.append((self.command, self.path, body))
            over = len(state.requests) > state.max_requests
        if over:
            self.close_connection = True
            self._send(503, json.dumps({"error": f"more than {state.max_requests} requests"}).encode())
        return not over

    def _send(self, status: int, payload: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except OSError:
            self.close_connection = True
