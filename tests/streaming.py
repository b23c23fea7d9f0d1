"""Streamed answers for tests: a :class:`~replies.Reply` as the chunks a server streams, and a timed streaming server.

- :func:`stream_chunks` renders a reply as OpenAI-style ``chat.completion.chunk``
  objects: a role chunk, reasoning and content in ``pieces`` pieces, each tool
  call's arguments in pieces (its id, type and name in the first), the
  ``finish_reason``, then ``usage`` in a last chunk without choices.
- :func:`sse` writes chunks as server-sent events, ``[DONE]`` last unless told.
- :class:`StreamingServer` streams on 127.0.0.1 with ``slots`` slots: a request
  waits for a slot, then ``first_byte`` seconds, then sends ``tokens`` one-token
  chunks ``1 / rate`` seconds apart, with usage and no ``timings``.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler
from typing import Any

from replies import Reply
from threaded import Served

__all__ = ["StreamingServer", "sse", "stream_chunks"]


def _split(text: str, pieces: int) -> list[str]:
    step = max(1, -(-len(text) // pieces))
    return [text[i : i + step] for i in range(0, len(text), step)] or [text]


def _chunk(choice: dict[str, Any] | None, **extra: Any) -> dict[str, Any]:
    base = {"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1700000000, "model": "m1"}
    return {**base, "choices": [] if choice is None else [{"index": 0, **choice}], **extra}


def stream_chunks(reply: Reply, pieces: int = 3) -> list[dict[str, Any]]:
    """The chunks a streaming server sends for ``reply``."""
    chunks = [_chunk({"delta": {"role": "assistant"}, "finish_reason": None})]
    if reply.reasoning_content is not None:
        chunks += [_chunk({"delta": {"reasoning_content": p}}) for p in _split(reply.reasoning_content, pieces)]
    if reply.content is not None:
        chunks += [_chunk({"delta": {"content": p}}) for p in _split(reply.content, pieces)]
    for index, (name, arguments) in enumerate(reply.tool_calls):
        head = {"index": index, "id": f"call_{index}", "type": "function", "function": {"name": name}}
        if isinstance(arguments, str) or not reply.object_arguments:
            text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
            parts = [{"index": index, "function": {"arguments": p}} for p in _split(text, pieces)]
        else:
            parts = [{"index": index, "function": {"arguments": dict(arguments)}}]
        chunks += [_chunk({"delta": {"tool_calls": [call]}}) for call in [head, *parts]]
    finish = "tool_calls" if reply.tool_calls else "stop"
    chunks.append(_chunk({"delta": {}, "finish_reason": finish}))
    if reply.usage is not None:
        prompt, completion = reply.usage
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        chunks.append(_chunk(None, usage=usage))
    return chunks


def sse(chunks: Sequence[dict[str, Any] | str], *, done: bool = True) -> bytes:
    """``chunks`` as server-sent events (a string is sent as the data as it is), ``[DONE]`` last when ``done``."""
    events = [c if isinstance(c, str) else json.dumps(c, ensure_ascii=False) for c in chunks]
    return "".join(f"data: {e}\n\n" for e in [*events, *(["[DONE]"] if done else [])]).encode()


class StreamingServer(Served):
    """A streaming chat server with ``slots`` slots, ``first_byte`` seconds to its first token, ``rate`` tokens/s."""

    def __init__(self, *, slots: int = 1, rate: float = 50.0, first_byte: float = 0.4, tokens: int = 16) -> None:
        self.rate, self.first_byte, self.tokens = rate, first_byte, tokens
        self.bodies: list[dict[str, Any]] = []
        self._slots = threading.BoundedSemaphore(slots)
        self._serve(_handler_for(self))

    def generate(self, write: Any) -> None:
        """Wait for a slot, then stream the answer through ``write(bytes)``."""
        with self._slots:
            time.sleep(self.first_byte)
            write(None)  # the headers
            start = time.perf_counter()
            for n in range(self.tokens):
                time.sleep(max(0.0, start + n / self.rate - time.perf_counter()))
                write(sse([_chunk({"delta": {"content": f"w{n} "}})], done=False))
        usage = {"prompt_tokens": 20, "completion_tokens": self.tokens, "total_tokens": 20 + self.tokens}
        write(sse([_chunk({"delta": {}, "finish_reason": "stop"}), _chunk(None, usage=usage)]))


def _handler_for(server: StreamingServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 30

        def setup(self) -> None:
            super().setup()
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:
            """Stay quiet."""

        def do_GET(self) -> None:
            """``/v1/models`` lists one model; anything else (``/props`` included) is 404: not llama.cpp."""
            found = self.path.rstrip("/") == "/v1/models"
            body = {"object": "list", "data": [{"id": "m1", "object": "model"}]} if found else {"error": "no"}
            payload = json.dumps(body).encode()
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_POST(self) -> None:
            """A chat completion, streamed."""
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            server.bodies.append(body)
            with contextlib.suppress(OSError):
                server.generate(self._write)

        def _write(self, data: bytes | None) -> None:
            if data is None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                return
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            if data.endswith(b"data: [DONE]\n\n"):
                self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return Handler
