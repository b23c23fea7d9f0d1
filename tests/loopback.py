"""The one OpenAI-compatible HTTP server on 127.0.0.1 every test talks to: scripted answers, or raw bytes on the wire.

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
  in ``server.errors``). ``GET /v1/models`` lists ``models``; any other path
  answers 404. ``props``, when given, is called for each ``GET /props`` and
  its JSON sent (a llama.cpp server's facts). A query string is ignored in
  routing.
- ``server.requests`` holds every request received (:class:`Received`: method,
  path, body, lower-cased headers, query, and how often the same request came
  before), ``server.bodies`` the chat bodies only.
- The server writes HTTP/1.1 on the socket itself, so it can send what no HTTP
  library would. A ``plan`` chooses, per request, something to send instead of
  the answer and an ``inject`` function writes it (``tests/faultserver.py``
  builds its fault injection on these); ``server.log`` pairs each request with
  what the plan chose.
- It is bounded: one thread per connection (keep-alive), at most
  ``max_requests`` requests (the rest get 503), a deadline of ``max_seconds``
  after which every request gets 503 and every stall ends, request bodies up to
  64 MiB; leaving the ``with`` block closes every connection, cuts any scripted
  delay short and joins the thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import select
import socket
import socketserver
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from replies import Reply

__all__ = ["Handler", "Inject", "LoopbackServer", "Plan", "Received", "Reply", "Wire"]

_MAX_REQUEST_BYTES = 64 * 1024 * 1024


Handler = Callable[[dict[str, Any], int], Reply]


@dataclass(frozen=True)
class Received:
    """One request the server received."""

    method: str
    path: str
    """The path, without the query string."""
    body: Any
    """The decoded JSON body, or ``None``."""
    n: int
    """0-based index of the request in arrival order (every path)."""
    attempt: int
    """How many times this same request (method, path, body) arrived before."""
    headers: Mapping[str, str] = field(default_factory=dict, compare=False)
    """The request's headers, names lower-cased."""
    query: str = ""
    """The query string of the request line, without ``?``."""

    @property
    def is_chat(self) -> bool:
        """True for a chat-completion request."""
        return self.method == "POST" and self.path.rstrip("/").endswith("/chat/completions")

    @property
    def model(self) -> str:
        """The requested model, or ``""``."""
        return str(self.body.get("model", "")) if isinstance(self.body, dict) else ""

    @property
    def effort(self) -> str:
        """The ``reasoning_effort`` sent, or ``""``."""
        return str(self.body.get("reasoning_effort", "")) if isinstance(self.body, dict) else ""


Plan = Callable[[Received], Any]
"""What to send instead of the answer to a request (a fault); the server's ``no_fault`` for the answer itself."""


@dataclass
class _State:
    handler: Handler
    models: Sequence[str]
    max_requests: int
    deadline: float
    stall_seconds: float
    plan: Plan | None
    inject: Inject | None
    no_fault: Any
    props: Callable[[], Mapping[str, Any]] | None = None
    """What ``GET /props`` answers (llama.cpp's facts about itself); None: 404, as another server."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    seen: Counter[str] = field(default_factory=Counter)
    injected: Counter[Any] = field(default_factory=Counter)
    log: list[tuple[Received, Any]] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)
    connections: set[socket.socket] = field(default_factory=set)
    chats: int = 0

    def ended(self) -> bool:
        return self.stopping.is_set() or time.monotonic() > self.deadline


class Wire:
    """One connection, as the server and a fault injector write on it."""

    def __init__(self, sock: socket.socket, state: _State) -> None:
        self.sock = sock
        self._state = state

    def send(
        self,
        status: int,
        payload: bytes,
        content_type: str = "application/json",
        extra: Mapping[str, str] | None = None,
        *,
        close: bool = True,
    ) -> None:
        """A whole response; ``close=False`` keeps the connection for the next request."""
        self.head(status, content_type, {"Content-Length": str(len(payload)), **(extra or {})}, close=close)
        self.sock.sendall(payload)

    def head(self, status: int, content_type: str, extra: Mapping[str, str], *, close: bool = True) -> None:
        """The status line and headers (``Connection: close`` unless ``close`` is False)."""
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}", f"Content-Type: {content_type}"]
        lines += [f"{name}: {value}" for name, value in extra.items()]
        if close:
            lines.append("Connection: close")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    def stall(self) -> None:
        """Hold the request unanswered until the client gives up, ``stall_seconds`` pass or the server stops."""
        until = time.monotonic() + self._state.stall_seconds
        while not self._state.ended() and time.monotonic() < until:
            readable, _, _ = select.select([self.sock], [], [], 0.05)
            if readable and not self.sock.recv(1, socket.MSG_PEEK):
                return

    def endless(self, first: bytes, frame: bytes, pause: float) -> None:
        """A chunked 200 body that never ends: it stops only when the client or the server does."""
        self.head(200, "application/json", {"Transfer-Encoding": "chunked"})
        self.sock.sendall(_chunk(first))
        while not self._state.ended():
            self.sock.sendall(_chunk(frame))
            if pause and self._state.stopping.wait(pause):
                return


Inject = Callable[[Wire, Any, bytes, bool], bool]
"""``inject(wire, fault, good, is_chat)`` writes ``fault`` instead of the ``good`` body; False to send the answer."""


class LoopbackServer:
    """An OpenAI-compatible server on 127.0.0.1 at a free port, serving from a background thread."""

    def __init__(
        self,
        handler: Handler | None = None,
        models: Sequence[str] = ("m1",),
        *,
        max_requests: int = 1000,
        max_seconds: float = 600.0,
        stall_seconds: float = 30.0,
        plan: Plan | None = None,
        inject: Inject | None = None,
        no_fault: Any = None,
        props: Callable[[], Mapping[str, Any]] | None = None,
    ) -> None:
        self._state = _State(
            handler or (lambda body, n: Reply.text("ok")), list(models), max_requests,
            time.monotonic() + max_seconds, stall_seconds, plan, inject, no_fault, props,
        )  # fmt: skip
        self._server: _Server | None = None
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
        return [received for received, _ in self.log]

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of the chat-completion requests received so far."""
        return [r.body for r in self.requests if r.is_chat]

    @property
    def log(self) -> list[tuple[Received, Any]]:
        """Every request received and what the plan chose for it, in arrival order (a copy)."""
        with self._state.lock:
            return list(self._state.log)

    @property
    def injected(self) -> Counter[Any]:
        """How many times the plan chose each fault (a copy)."""
        with self._state.lock:
            return Counter(self._state.injected)

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions the handler or the server itself raised (a test should expect none)."""
        with self._state.lock:
            return list(self._state.errors)

    def __enter__(self) -> LoopbackServer:
        server = _Server(("127.0.0.1", 0), _Connection)
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
        """Stop serving, end every delay, stall and stream, close every connection, and wait for the thread."""
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
            self._thread.join(timeout=10)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256
    state: _State


@dataclass(frozen=True)
class _Request:
    method: str
    path: str
    query: str
    headers: Mapping[str, str]
    raw: bytes


class _TooLargeError(Exception):
    """The request body is over the limit."""


class _Connection(socketserver.BaseRequestHandler):
    """One client connection: requests answered in turn while both sides keep it open."""

    server: _Server
    request: socket.socket

    def setup(self) -> None:
        self.request.settimeout(10)
        with self.server.state.lock:
            self.server.state.connections.add(self.request)

    def finish(self) -> None:
        with self.server.state.lock:
            self.server.state.connections.discard(self.request)

    def handle(self) -> None:
        state, wire = self.server.state, Wire(self.request, self.server.state)
        stream = self.request.makefile("rb")
        try:
            for _ in range(100_000):
                request = _read_request(stream)
                if request is None or not self._respond(wire, request):
                    return
        except _TooLargeError:
            with contextlib.suppress(OSError):
                wire.send(413, _error_body("request too large"))
        except OSError:  # the client went away: a timeout on its side, or a cut it provoked
            return
        except Exception as exc:
            with state.lock:
                state.errors.append(exc)
            with contextlib.suppress(OSError):
                wire.send(500, _error_body(f"loopback server failed: {exc!r}"))

    def _respond(self, wire: Wire, request: _Request) -> bool:
        """Answer one request; True when the connection may carry another."""
        state = self.server.state
        body = _json_or_none(request.raw)
        with state.lock:
            key = f"{request.method} {request.path} {hashlib.sha256(request.raw).hexdigest()}"
            received = Received(
                request.method, request.path, body, len(state.log), state.seen[key], request.headers, request.query
            )
            state.seen[key] += 1
            over = len(state.log) >= state.max_requests or state.ended()
        models = request.method == "GET" and request.path.rstrip("/") == "/v1/models"
        served = not over and (models or (received.is_chat and isinstance(body, dict)))
        fault = state.plan(received) if served and state.plan is not None else state.no_fault
        with state.lock:
            state.log.append((received, fault))
            if fault is not state.no_fault:
                state.injected[fault] += 1
        keep = request.headers.get("connection", "").lower() != "close"
        if over:
            wire.send(503, _error_body(f"loopback: more than {state.max_requests} requests, or past its deadline"))
            return False
        if models:
            data = [{"id": m, "object": "model", "owned_by": "loopback"} for m in state.models]
            return self._send(wire, fault, json.dumps({"object": "list", "data": data}).encode(), False, keep)
        if request.method == "GET" and request.path.rstrip("/") == "/props" and state.props is not None:
            return self._send(wire, fault, json.dumps(state.props()).encode(), False, keep)
        if not served:
            status = 404 if isinstance(body, dict) else 400
            wire.send(status, _error_body(f"no route for {request.method} {request.path}"), close=not keep)
            return keep
        return self._chat(wire, body, fault, keep)

    def _chat(self, wire: Wire, body: dict[str, Any], fault: Any, keep: bool) -> bool:
        state = self.server.state
        with state.lock:
            n = state.chats
            state.chats += 1
        try:
            reply = state.handler(body, n)
        except Exception as exc:
            with state.lock:
                state.errors.append(exc)
            wire.send(500, _error_body(f"loopback handler failed: {exc!r}"), close=not keep)
            return keep
        if reply.delay and state.stopping.wait(reply.delay):
            return False
        if reply.disconnect:
            return False
        good = reply.render(str(body.get("model", "")), n)
        if fault is not state.no_fault:
            return self._send(wire, fault, good, True, keep)
        extra = {"Retry-After": reply.retry_after} if reply.retry_after is not None else {}
        wire.send(reply.status, good, reply.content_type, extra, close=not keep)
        return keep

    def _send(self, wire: Wire, fault: Any, good: bytes, chat: bool, keep: bool) -> bool:
        """``good``, unless the injector writes ``fault`` instead (then the connection closes)."""
        state = self.server.state
        if fault is not state.no_fault and state.inject is not None and state.inject(wire, fault, good, chat):
            return False
        wire.send(200, good, close=not keep)
        return keep


_REASONS = {
    200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 408: "Request Timeout",
    413: "Content Too Large", 429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable",
}  # fmt: skip


def _read_request(stream: Any) -> _Request | None:
    """Read one request (line, headers, a Content-Length body); None when the client sent nothing usable."""
    line = stream.readline(65537)
    parts = line.decode("latin-1").split()
    if len(parts) != 3:
        return None
    headers: dict[str, str] = {}
    for _ in range(200):
        header = stream.readline(65537)
        if header in (b"\r\n", b"\n", b""):
            break
        name, _, value = header.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length") or 0)
    if length > _MAX_REQUEST_BYTES:
        raise _TooLargeError
    raw = stream.read(length) if length else b""
    path, _, query = parts[1].partition("?")
    return _Request(parts[0], path, query, headers, raw)


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


def _error_body(message: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode()
