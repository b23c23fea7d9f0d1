"""A loopback OpenAI-compatible server answering each request with an answer chosen for it (the agreement scripts).

``AnswerServer(choose, models)`` serves on 127.0.0.1 at a free port, in a
thread: ``GET /v1/models`` lists ``models``; ``POST /v1/chat/completions``
calls ``choose(model, body)`` for a :class:`Crafted` answer and sends it, as one
JSON body or, when the request asks ``"stream": true``, as server-sent events
(a role chunk, the content in pieces, each tool call with its arguments in two
pieces, the finish reason, usage, ``[DONE]``). ``GET /props`` is 404, so tsuka
streams unless told ``--option stream=off``. Standard library only.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["AnswerServer", "Crafted"]


@dataclass(frozen=True)
class Crafted:
    """One answer as a server sends it: its text, its tool calls (name, arguments as written), how it ended."""

    kind: str
    calls: tuple[tuple[str, str], ...] = ()
    text: str = ""
    cut: bool = False

    def message(self) -> dict[str, Any]:
        """The answer's ``message``: content (None when empty and there are calls), tool calls when any."""
        found: dict[str, Any] = {"role": "assistant", "content": self.text or (None if self.calls else "")}
        if self.calls:
            found["tool_calls"] = [
                {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": arguments}}
                for i, (name, arguments) in enumerate(self.calls)
            ]
        return found

    @property
    def finish_reason(self) -> str:
        """``length`` when cut, else ``tool_calls`` or ``stop``."""
        return "length" if self.cut else "tool_calls" if self.calls else "stop"


Choose = Callable[[str, dict[str, Any]], Crafted]


class AnswerServer:
    """The server, started and stopped as a context manager."""

    def __init__(self, choose: Choose, models: Sequence[str]) -> None:
        self.choose, self.models = choose, list(models)
        self.errors: list[str] = []
        self._http: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        assert self._http is not None
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def __enter__(self) -> AnswerServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                del format, args

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/v1/models"):
                    data = [{"id": m, "object": "model", "owned_by": "agreement"} for m in server.models]
                    self._send(200, {"object": "list", "data": data})
                else:
                    self._send(404, {"error": {"message": f"no route for GET {self.path}"}})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
                try:
                    answer = server.choose(str(body.get("model")), body)
                except Exception as exc:  # a bug in the script: said, answered 500
                    server.errors.append(f"{type(exc).__name__}: {exc}")
                    self._send(500, {"error": {"message": str(exc)}})
                    return
                if body.get("stream"):
                    self._stream(answer)
                else:
                    choice = {"index": 0, "message": answer.message(), "finish_reason": answer.finish_reason}
                    self._send(200, {"choices": [choice], "usage": {"prompt_tokens": 10, "completion_tokens": 5}})

            def _send(self, status: int, data: Any) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _stream(self, answer: Crafted) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for event in _events(answer):
                    line = f"data: {event}\n\n".encode()
                    self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")

        class Server(ThreadingHTTPServer):
            request_queue_size = 64  # tsuka sends up to 16 at once; the default backlog of 5 drops connections

        self._http = Server(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        threading.Thread(target=self._http.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    return json.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


def _events(answer: Crafted) -> Iterator[str]:
    """The answer as server-sent events, as an OpenAI-compatible server streams one."""
    yield _chunk({"role": "assistant", "content": ""})
    text = answer.text
    for start in range(0, len(text), 7):
        yield _chunk({"content": text[start : start + 7]})
    for index, (name, arguments) in enumerate(answer.calls):
        half = len(arguments) // 2
        head = {"index": index, "id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": ""}}
        yield _chunk({"tool_calls": [head]})
        for piece in (arguments[:half], arguments[half:]):
            yield _chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield _chunk({}, answer.finish_reason)
    yield json.dumps({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
    yield "[DONE]"
