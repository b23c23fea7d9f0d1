"""A plain-HTTP forward proxy on 127.0.0.1 that records every request it carries (standard library only).

Usage::

    with RecordingProxy() as proxy:
        ...  # set HTTP_PROXY=proxy.url, send requests to http://127.0.0.1:PORT/...
    assert proxy.seen == ["GET http://127.0.0.1:PORT/api/tags"]

It takes requests in absolute form (``GET http://host:port/path HTTP/1.1``),
as a client sends them to a proxy, records ``METHOD URL``, sends the request
on to its server over a connection of its own and relays the answer (status,
headers, whole body). Anything else (``CONNECT``, a request in origin form)
answers 400 and is recorded too, in ``refused``.
"""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

__all__ = ["RecordingProxy"]

_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "trailer", "transfer-encoding"}
)
_TIMEOUT = 30.0


class RecordingProxy(ThreadingHTTPServer):
    """The proxy, serving in a thread of its own between entering and leaving a ``with`` block."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Forward)
        self.seen: list[str] = []
        """``METHOD URL`` of each request carried, in order."""
        self.refused: list[str] = []
        """The request line of each request that was not in absolute form."""
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The proxy's URL, for ``HTTP_PROXY`` or ``--proxy``."""
        return f"http://127.0.0.1:{self.server_address[1]}"

    def record(self, into: list[str], line: str) -> None:
        """Add ``line`` to ``into`` (``seen`` or ``refused``)."""
        with self._lock:
            into.append(line)

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=10)


class _Forward(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: RecordingProxy

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reads ``seen``."""

    def do_GET(self) -> None:
        self._forward()

    def do_POST(self) -> None:
        self._forward()

    def do_CONNECT(self) -> None:
        self._refuse()

    def _forward(self) -> None:
        target = urlsplit(self.path)
        if target.scheme != "http" or not target.hostname:
            self._refuse()
            return
        self.server.record(self.server.seen, f"{self.command} {self.path}")
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        headers = {name: value for name, value in self.headers.items() if name.lower() not in _HOP_BY_HOP}
        upstream = http.client.HTTPConnection(target.hostname, target.port or 80, timeout=_TIMEOUT)
        try:
            path = (target.path or "/") + (f"?{target.query}" if target.query else "")
            upstream.request(self.command, path, body=body, headers=headers)
            answer = upstream.getresponse()
            data = answer.read()
        finally:
            upstream.close()
        self.send_response(answer.status, answer.reason)
        for name, value in answer.getheaders():
            if name.lower() not in _HOP_BY_HOP and name.lower() != "content-length":
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _refuse(self) -> None:
        self.server.record(self.server.refused, self.requestline)
        self.send_error(400, "this proxy carries plain-HTTP requests in absolute form only")
