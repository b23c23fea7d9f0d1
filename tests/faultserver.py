"""A fault-injecting OpenAI-compatible server on 127.0.0.1: it answers right, or breaks in a chosen way, per request.

Usage::

    plan = FaultPlan.rate(RETRYABLE, 0.3, seed=7, max_in_a_row=3)
    with FaultServer(perfect, plan, models=["alpha", "beta"]) as server:
        ...  # point a backend at server.base_url ("http://127.0.0.1:PORT/v1")
    assert server.injected[Fault.STALL] > 0

- The good answer of every chat request comes from an answerer (any loopback
  handler, ``(body, n) -> Reply``, such as ``answerers.perfect``); ``GET
  /v1/models`` lists ``models``.
- A :class:`FaultPlan` decides, for each request, which :class:`Fault` (or
  :attr:`Fault.NONE`) to inject. Its choice depends only on the seed, the
  request itself and how often that same request was seen before, never on
  arrival order, so concurrent runs are reproducible.
- The server writes raw HTTP/1.1 on the socket, so it can send what no HTTP
  library would: a body cut off mid-way, invalid UTF-8, a body that never ends.
  Every response carries ``Connection: close``.
- It is bounded: at most ``max_requests`` requests (the rest get 503), a
  deadline of ``max_seconds`` after which every request gets 503 and every
  stall or endless body stops, request bodies up to 16 MiB, and ``stop()``
  (leaving the ``with`` block) ends every connection and joins the thread.

:func:`measure` runs a whole benchmark against it in-process, bounded in time,
with :func:`openai_registry` (no in-process model needed); :func:`comparable`
strips what differs between two runs of the same answers. The fault tests and
``bench/fault_table.py`` share these.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import hashlib
import json
import random
import select
import socket
import socketserver
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from loopback import Reply

import tsuka_core
from tsuka_checks_builtin import plugin as builtin_plugin
from tsuka_core import RegisterBackend, RegisterCheckType, Registry, RunOptions, RunReport, run_benchmark
from tsuka_core.backends.base import BackendConfig
from tsuka_core.backends.openai import OpenAIBackend
from tsuka_core.engine.results import TestResult
from tsuka_core.plugins.manager import LoadedPlugin
from tsuka_core.suite.model import Suite
from tsuka_core.terms import EFFORTS, Effort

__all__ = [
    "MALFORMED",
    "PERSISTENT",
    "RETRYABLE",
    "UNREADABLE",
    "Answerer",
    "Fault",
    "FaultPlan",
    "FaultServer",
    "Heard",
    "Incoming",
    "comparable",
    "measure",
    "openai_registry",
]

Answerer = Callable[[dict[str, Any], int], Reply]

HUGE_ANSWER_BYTES = 10 * 1024 * 1024
"""Size of the content of a :attr:`Fault.HUGE_ANSWER`."""
_MAX_REQUEST_BYTES = 16 * 1024 * 1024
_INVALID_UTF8 = b"\xff\xfe\xc3\x28\xa0\xa1\xe2\x82"
"""Bytes that are not UTF-8: lone continuation bytes, a bad two-byte sequence, a cut three-byte one."""


class Fault(enum.Enum):
    """One way a server can misbehave on one request."""

    NONE = "none"
    RATE_LIMITED = "429"
    RATE_LIMITED_RETRY_AFTER = "429 + Retry-After"
    SERVER_ERROR = "500"
    UNAVAILABLE = "503"
    STALL = "stall past timeout"
    CLOSE_MID_BODY = "close mid-body"
    NOT_JSON = "body not JSON"
    NO_CHOICES = "JSON without choices"
    EMPTY_CHOICES = "choices: []"
    NULL_CONTENT = "content null, no tool call"
    ARGS_NOT_JSON = "tool args not JSON"
    ARGS_NULL = "tool args JSON null"
    ARGS_SCALAR = "tool args a scalar"
    CALL_WITHOUT_FUNCTION = "tool call without function"
    HUGE_ANSWER = "10 MB answer"
    INVALID_UTF8 = "invalid UTF-8"
    ENDLESS_BODY = "never-ending body"
    TRICKLE_BODY = "never-ending slow body"


RETRYABLE: tuple[Fault, ...] = (
    Fault.RATE_LIMITED,
    Fault.RATE_LIMITED_RETRY_AFTER,
    Fault.SERVER_ERROR,
    Fault.UNAVAILABLE,
    Fault.STALL,
    Fault.CLOSE_MID_BODY,
)
"""Transient faults: tried again after a backoff, they must cost nothing but time."""
UNREADABLE: tuple[Fault, ...] = (
    Fault.NOT_JSON,
    Fault.NO_CHOICES,
    Fault.EMPTY_CHOICES,
    Fault.ENDLESS_BODY,
    Fault.TRICKLE_BODY,
)
"""Answers with nothing a check could read: the request fails and its test is an error."""
MALFORMED: tuple[Fault, ...] = (
    Fault.NULL_CONTENT,
    Fault.ARGS_NOT_JSON,
    Fault.ARGS_NULL,
    Fault.ARGS_SCALAR,
    Fault.CALL_WITHOUT_FUNCTION,
    Fault.HUGE_ANSWER,
    Fault.INVALID_UTF8,
)
"""Answers that can be read, badly: the checks judge what is there and fail with a detail."""
PERSISTENT: tuple[Fault, ...] = RETRYABLE + UNREADABLE
"""Faults that, on every attempt, make a request fail for good."""


@dataclass(frozen=True)
class Incoming:
    """One request as a plan sees it."""

    method: str
    path: str
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


Plan = Callable[[Incoming], Fault]


class FaultPlan:
    """Ready-made plans: which fault each request gets."""

    @staticmethod
    def never() -> Plan:
        """No fault at all."""
        return lambda incoming: Fault.NONE

    @staticmethod
    def always(fault: Fault, when: Callable[[Incoming], bool] | None = None) -> Plan:
        """``fault`` on every chat request (or every chat request ``when`` accepts); the rest pass."""

        def plan(incoming: Incoming) -> Fault:
            chosen = incoming.is_chat and (when is None or when(incoming))
            return fault if chosen else Fault.NONE

        return plan

    @staticmethod
    def rate(
        faults: Sequence[Fault],
        rate: float,
        *,
        seed: int,
        max_in_a_row: int | None = None,
        chat_only: bool = False,
    ) -> Plan:
        """A fault drawn from ``faults`` on a share ``rate`` of requests, reproducibly from ``seed``.

        The draw depends on the seed, a digest of the request and its attempt
        number. ``max_in_a_row`` lets the same request fail at most that many
        times running (a transient fault that clears within the retry budget).
        """

        def plan(incoming: Incoming) -> Fault:
            if (chat_only and not incoming.is_chat) or (max_in_a_row is not None and incoming.attempt >= max_in_a_row):
                return Fault.NONE
            draw = random.Random(f"{seed}:{_digest(incoming)}:{incoming.attempt}")
            return draw.choice(list(faults)) if draw.random() < rate else Fault.NONE

        return plan


def _digest(incoming: Incoming) -> str:
    body = json.dumps(incoming.body, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(f"{incoming.method} {incoming.path} {body}".encode()).hexdigest()[:16]


@dataclass
class _State:
    answerer: Answerer
    plan: Plan
    models: Sequence[str]
    max_requests: int
    deadline: float
    stall_seconds: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    seen: Counter[str] = field(default_factory=Counter)
    injected: Counter[Fault] = field(default_factory=Counter)
    log: list[tuple[Incoming, Fault]] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)
    connections: set[socket.socket] = field(default_factory=set)
    chats: int = 0

    def ended(self) -> bool:
        return self.stopping.is_set() or time.monotonic() > self.deadline


class FaultServer:
    """An OpenAI-compatible server on 127.0.0.1 at a free port that injects the faults of a plan."""

    def __init__(
        self,
        answerer: Answerer,
        plan: Plan | None = None,
        models: Sequence[str] = ("m1",),
        *,
        max_requests: int = 5000,
        max_seconds: float = 120.0,
        stall_seconds: float = 30.0,
    ) -> None:
        deadline = time.monotonic() + max_seconds
        self._state = _State(answerer, plan or FaultPlan.never(), list(models), max_requests, deadline, stall_seconds)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        if self._server is None:
            raise RuntimeError("the fault server is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def injected(self) -> Counter[Fault]:
        """How many times each fault was injected (a copy)."""
        with self._state.lock:
            return Counter(self._state.injected)

    @property
    def log(self) -> list[tuple[Incoming, Fault]]:
        """Every request received and the fault it got, in arrival order (a copy)."""
        with self._state.lock:
            return list(self._state.log)

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions the answerer or the server itself raised (a test should expect none)."""
        with self._state.lock:
            return list(self._state.errors)

    def __enter__(self) -> FaultServer:
        server = _Server(("127.0.0.1", 0), _Handler)
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
        """Stop serving, end every stall and stream, close every connection, and wait for the thread."""
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
        self._server = None


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


class _Handler(socketserver.BaseRequestHandler):
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
        state = self.server.state
        try:
            request = _read_request(self.request.makefile("rb"))
            if request is None:
                return
            self._respond(request)
        except OSError:  # the client went away: a timeout on its side, or a cut it provoked
            return
        except Exception as exc:
            with state.lock:
                state.errors.append(exc)
            with contextlib.suppress(OSError):
                self._send(500, _error_body(f"fault server failed: {exc!r}"))

    def _respond(self, request: _Request) -> None:
        state = self.server.state
        body = _json_or_none(request.raw)
        with state.lock:
            key = f"{request.method} {request.path} {hashlib.sha256(request.raw).hexdigest()}"
            incoming = Incoming(
                request.method, request.path, body, len(state.log), state.seen[key], request.headers, request.query
            )
            state.seen[key] += 1
            over = len(state.log) >= state.max_requests or state.ended()
        served = incoming.is_chat or (request.method == "GET" and request.path.rstrip("/") == "/v1/models")
        fault = Fault.NONE if over or not served else state.plan(incoming)  # a 404 is never a fault
        with state.lock:
            state.log.append((incoming, fault))
            if fault is not Fault.NONE:
                state.injected[fault] += 1
        if over:
            self._send(503, _error_body("fault server: request limit or deadline reached"))
        elif request.method == "GET" and request.path.rstrip("/") == "/v1/models":
            self._models(fault)
        elif incoming.is_chat and isinstance(body, dict):
            self._chat(body, fault)
        else:
            self._send(404, _error_body(f"no route for {request.method} {request.path}"))

    def _models(self, fault: Fault) -> None:
        data = [{"id": m, "object": "model", "owned_by": "faultserver"} for m in self.server.state.models]
        good = json.dumps({"object": "list", "data": data}).encode()
        if not self._transport_fault(fault, good):
            self._send(200, good)

    def _chat(self, body: dict[str, Any], fault: Fault) -> None:
        state = self.server.state
        with state.lock:
            n = state.chats
            state.chats += 1
        reply = state.answerer(body, n)
        good = reply.render(str(body.get("model", "")), n)
        if self._transport_fault(fault, good):
            return
        if fault is Fault.NONE:
            extra = {"Retry-After": reply.retry_after} if reply.retry_after is not None else {}
            self._send(reply.status, good, reply.content_type, extra)
            return
        self._send(200, _malformed(fault, json.loads(good)))

    def _transport_fault(self, fault: Fault, good: bytes) -> bool:
        """Inject a fault of status or transport; False when ``fault`` is not one of those."""
        if fault is Fault.RATE_LIMITED:
            self._send(429, _error_body("rate limit reached, slow down"))
        elif fault is Fault.RATE_LIMITED_RETRY_AFTER:
            self._send(429, _error_body("rate limit reached, retry later"), extra={"Retry-After": "0"})
        elif fault is Fault.SERVER_ERROR:
            self._send(500, _error_body("the model crashed"))
        elif fault is Fault.UNAVAILABLE:
            self._send(503, b"<html><body><h1>503 Service Unavailable</h1></body></html>", "text/html")
        elif fault is Fault.STALL:
            self._stall()
        elif fault is Fault.CLOSE_MID_BODY:
            self._head(200, "application/json", {"Content-Length": str(len(good))})
            self.request.sendall(good[: len(good) // 2])
        elif fault in (Fault.NOT_JSON, Fault.NO_CHOICES, Fault.EMPTY_CHOICES):
            self._send(200, _unreadable(fault), "text/html" if fault is Fault.NOT_JSON else "application/json")
        elif fault is Fault.ENDLESS_BODY:
            self._endless(pause=0.0)
        elif fault is Fault.TRICKLE_BODY:
            self._endless(pause=0.05)
        else:
            return False
        return True

    def _stall(self) -> None:
        """Hold the request unanswered until the client gives up, the stall ends or the server stops."""
        state = self.server.state
        until = time.monotonic() + state.stall_seconds
        while not state.ended() and time.monotonic() < until:
            readable, _, _ = select.select([self.request], [], [], 0.05)
            if readable and not self.request.recv(1, socket.MSG_PEEK):
                return

    def _endless(self, pause: float) -> None:
        """A chunked 200 body that never ends: it stops only when the client or the server does."""
        state = self.server.state
        self._head(200, "application/json", {"Transfer-Encoding": "chunked"})
        self.request.sendall(_chunk(b'{"choices": [{"message": {"content": "'))
        frame = _chunk(b"x" * (65536 if pause == 0 else 1))
        while not state.ended():
            self.request.sendall(frame)
            if pause and state.stopping.wait(pause):
                return

    def _head(self, status: int, content_type: str, extra: Mapping[str, str]) -> None:
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}", f"Content-Type: {content_type}"]
        lines += [f"{name}: {value}" for name, value in extra.items()]
        lines.append("Connection: close")
        self.request.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    def _send(
        self,
        status: int,
        payload: bytes,
        content_type: str = "application/json",
        extra: Mapping[str, str] | None = None,
    ) -> None:
        self._head(status, content_type, {"Content-Length": str(len(payload)), **(extra or {})})
        self.request.sendall(payload)


_REASONS = {200: "OK", 404: "Not Found", 429: "Too Many Requests", 500: "Internal Server Error", 503: "Unavailable"}


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
        return None
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
    return json.dumps({"error": {"message": message, "type": "server_error"}}).encode()


def _unreadable(fault: Fault) -> bytes:
    if fault is Fault.NOT_JSON:
        return b"<html><body>502 Bad Gateway: upstream sent nonsense</body></html>"
    if fault is Fault.NO_CHOICES:
        return json.dumps({"id": "chatcmpl-x", "object": "chat.completion", "model": "m"}).encode()
    return json.dumps({"id": "chatcmpl-x", "object": "chat.completion", "choices": []}).encode()


def _malformed(fault: Fault, good: dict[str, Any]) -> bytes:
    """The good completion with its message broken in the way ``fault`` names."""
    choice = good["choices"][0]
    message: dict[str, Any] = choice["message"]
    calls: list[dict[str, Any]] = message.get("tool_calls") or [
        {"id": "call_0", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    ]
    if fault is Fault.NULL_CONTENT:
        choice["message"] = {"role": "assistant", "content": None}
    elif fault in (Fault.ARGS_NOT_JSON, Fault.ARGS_NULL, Fault.ARGS_SCALAR):
        arguments: Any = {Fault.ARGS_NOT_JSON: "<not json at all>", Fault.ARGS_NULL: "null", Fault.ARGS_SCALAR: 42}
        for call in calls:
            call["function"]["arguments"] = arguments[fault]
        message["tool_calls"] = calls
    elif fault is Fault.CALL_WITHOUT_FUNCTION:
        message["tool_calls"] = [{"id": call.get("id", "call_0"), "type": "function"} for call in calls]
    elif fault is Fault.HUGE_ANSWER:
        message["content"] = (message.get("content") or "") + "\n" + _huge_text()
    elif fault is Fault.INVALID_UTF8:
        marker = "\u0000INVALID\u0000"
        message["content"] = (message.get("content") or "") + marker
        encoded = json.dumps(good, ensure_ascii=False).encode()
        return encoded.replace(json.dumps(marker).strip('"').encode(), _INVALID_UTF8)
    return json.dumps(good, ensure_ascii=False).encode()


_huge: list[str] = []


def _huge_text() -> str:
    """About :data:`HUGE_ANSWER_BYTES` of prose (built once)."""
    if not _huge:
        sentence = "The quick brown fox jumps over the lazy dog near the river bank. "
        _huge.append(sentence * (HUGE_ANSWER_BYTES // len(sentence)))
    return _huge[0]


# --- driving a run against the server -------------------------------------------------------------------------------

VOLATILE_FIELDS = (
    "provider",
    "testedAt",
    "tokensPerSecond",
    "promptTokensPerSecond",
    "timeToFirstTokenMs",
    "effortEffective",
)
"""Fields that differ between two runs of the same answers: where (each server has its own port), when, how fast,
and whether the other levels measured in the same run answered alike."""


def comparable(profile: Mapping[str, Any]) -> dict[str, Any]:
    """A stored profile without its :data:`VOLATILE_FIELDS`, to compare two runs' measurements."""
    return {k: v for k, v in profile.items() if k not in VOLATILE_FIELDS}


class _OpenAIOnly:
    """The built-in check types and the OpenAI-compatible backend (no in-process model)."""

    @tsuka_core.hookimpl
    def register_check_types(self, register: RegisterCheckType) -> None:
        builtin_plugin.register_check_types(register)

    @tsuka_core.hookimpl
    def register_backends(self, register: RegisterBackend) -> None:
        register(OpenAIBackend)


def openai_registry() -> Registry:
    """A registry of the built-in check types and the ``openai`` backend."""
    return Registry.from_plugins([LoadedPlugin("builtin", "tsuka", "0", _OpenAIOnly())])


@dataclass
class Heard:
    """A sweep observer that keeps every finished test and note."""

    done: list[tuple[str, str, TestResult]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def level_started(self, model: str, effort: Effort, applied: bool, total: int) -> None:
        """Nothing to keep."""

    def test_done(self, model: str, effort: Effort, result: TestResult) -> None:
        """Keep the result."""
        self.done.append((model, effort, result))

    def note(self, message: str) -> None:
        """Keep the note."""
        self.notes.append(message)

    def results(self, model: str, effort: str) -> dict[str, TestResult]:
        """The results of one level, by test name."""
        return {r.test.name: r for m, e, r in self.done if (m, e) == (model, effort)}


def measure(
    base_url: str,
    store: Path,
    suite: Suite,
    registry: Registry,
    *,
    models: Sequence[str] = ("all",),
    efforts: Sequence[Effort] = EFFORTS,
    retries: int = 3,
    timeout: float = 5.0,
    concurrency: int = 4,
    api_key: str | None = None,
    bound: float = 120.0,
) -> tuple[RunReport, Heard]:
    """One ``run_benchmark`` against ``base_url`` into ``store``, abandoned (TimeoutError) after ``bound`` seconds."""
    config = BackendConfig(base_url=base_url, api_key=api_key, timeout=timeout, retries=retries)
    options = RunOptions(
        models=models, backend="openai", config=config, efforts=efforts, store_path=store, concurrency=concurrency
    )
    heard = Heard()

    async def bounded() -> RunReport:
        return await asyncio.wait_for(run_benchmark(options, suite, registry, heard), bound)

    return asyncio.run(bounded()), heard
