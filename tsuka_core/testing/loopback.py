"""A scripted HTTP server on 127.0.0.1 for backend tests: it answers each request from a queue and records it."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["Reply", "ScriptedServer", "Seen"]

MAX_REQUEST_BYTES = 4_000_000
"""The largest request body the server reads; a backend sending more is told 413."""


@dataclass(frozen=True)
class Reply:
    """One scripted HTTP answer: status, a JSON body (or raw bytes), headers, and a delay before it."""

    body: Any = None
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering (a slow server, to time a backend out)."""

    def encoded(self) -> bytes:
        """The body as sent: bytes as given, anything else as JSON."""
        return self.body if isinstance(self.body, bytes) else json.dumps(self.body).encode("utf-8")


@dataclass(frozen=True)
class Seen:
    """One request the server received."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any
    """The body decoded as JSON; the raw text when it is not JSON; None when empty."""


class ScriptedServer:
    """Answers requests to ``path`` from a queue of :class:`Reply`, then ``default``; any other path from ``other``.

    Use it as a context manager: ``with ScriptedServer("/v1/chat/completions") as server:``;
    ``server.url`` is its root (``http://127.0.0.1:PORT``), ``server.seen`` what it received.
    """

    def __init__(
        self, path: str, other: Callable[[str, str], Reply] | None = None, default: Reply | None = None
    ) -> None:
        self.path = path
        self.default = default
        """The reply once the queue is empty (default: a 500 saying no reply was scripted)."""
        self.other = other or (lambda method, path: Reply({"error": {"message": f"no route {path}"}}, 404))
        self.queue: deque[Reply] = deque()
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        """The server's root URL."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def script(self, *replies: Reply | Iterable[Reply]) -> None:
        """Answer the next requests to ``path`` with ``replies``, in order (and forget what was seen).

        ``script(a, b)`` and ``script([a, b])`` are the same; anything but a :class:`Reply` is a TypeError here,
        in the test, never a failure in the server's thread.
        """
        flat: list[Any] = [r for item in replies for r in (item if isinstance(item, list | tuple) else [item])]
        wrong = next((r for r in flat if not isinstance(r, Reply)), None)
        if wrong is not None:
            raise TypeError(
                f"ScriptedServer.script takes Reply objects (or a list of them), got {type(wrong).__name__}"
            )
        with self._lock:
            self.queue.clear()
            self.queue.extend(flat)
            self.seen.clear()

    def requests_to(self, path: str | None = None) -> list[Seen]:
        """The requests received for ``path`` (default: the scripted one)."""
        with self._lock:
            return [s for s in self.seen if s.path.split("?")[0] == (path or self.path)]

    def _answer(self, method: str, path: str, headers: Mapping[str, str], raw: bytes) -> Reply:
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        with self._lock:
            self.seen.append(Seen(method, path, headers, body))
            if path.split("?", maxsplit=1)[0] != self.path:
                return self.other(method, path)
            if not self.queue:
                return self.default or Reply({"error": {"message": "the test scripted no reply for this request"}}, 500)
            return self.queue.popleft()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_REQUEST_BYTES:
                    self.send_error(413)
                    return
                raw = self.rfile.read(length) if length else b""
                reply = server._answer(self.command, self.path, dict(self.headers), raw)
                if not isinstance(reply, Reply):  # an ``other`` callable that returned something else
                    said = f"the test's ScriptedServer answered with a {type(reply).__name__}, not a Reply"
                    reply = Reply({"error": {"message": said}}, 500)
                if reply.delay:
                    time.sleep(reply.delay)
                data = reply.encoded()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (a time-out under test)
                    pass

            def do_GET(self) -> None:
                """Answer a GET."""
                self._serve()

            def do_POST(self) -> None:
                """Answer a POST."""
                self._serve()

            def log_message(self, format: str, *args: Any) -> None:
                """Silent."""

        return Handler

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
