"""A loopback OpenAI-compatible server for benchmarks: a fixed latency, no compute, hundreds of requests in flight.

Standard library only (asyncio protocols), so it runs with nothing but Python.
Run it as a process: ``python bench/_server.py [--port 0] [--models a,b]``; it
prints ``listening on PORT`` once ready and serves until SIGTERM or SIGINT.

- ``POST [/<ms>ms]/v1/chat/completions`` answers after ``<ms>`` milliseconds
  (0 without the prefix). The answer is canned, chosen by the marker
  ``<<bench:KIND>>`` found in the request body (see :data:`REPLIES`); no JSON
  is parsed, so serving costs next to nothing.
- ``GET [/<ms>ms]/v1/models`` lists the models, after ``<ms>`` milliseconds too.
- ``GET [/<ms>ms]/props`` answers ``{}`` after ``<ms>`` milliseconds: the
  round trip a client makes to a llama.cpp server's ``/props``, with no facts
  in it (so nothing stored changes).
- ``GET /_stats`` returns ``{"chat": n, "max_in_flight": m, "connections": c}``
  since the last ``POST /_reset``: how many chat requests were answered, the
  most that were held at once (which shows the client's real concurrency) and
  how many connections were accepted (which shows whether the client reuses
  them).

HTTP/1.1 with keep-alive; one request at a time per connection (pipelined
requests wait their turn); request bodies up to 16 MiB.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import signal
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["MARKER", "REPLIES", "main", "serve"]

MARKER = b"<<bench:"
"""Written in a prompt as ``<<bench:KIND>>`` to choose the canned answer."""

_MAX_HEAD = 64 * 1024
_MAX_BODY = 16 * 1024 * 1024
_WAKE_EARLY = 0.001
"""Seconds before an answer is due that its timer fires; the rest is waited out on the clock.

An idle process's timer ends 0.3-0.6 ms late on a virtual machine (the CPU has
to be woken); answering after that would count the server's lateness as the
client's overhead. Waking 1 ms early and spinning the remainder costs at most
1 ms of CPU per wake-up and keeps the answer within a few microseconds of due.
"""
_ROUTE = re.compile(rb"^(?:/(\d{1,6})ms)?(?:/v1/(chat/completions|models)|/(props))/?$")

SENTENCE = "Every morning the old fisherman walks slowly beside the river."
LIST = "iron\ncopper\nsilver"
DOCUMENT: dict[str, Any] = {
    "cheapest": [{"name": "spoon", "price": 3}, {"name": "mug", "price": 6}, {"name": "tray", "price": 9}],
    "total_cost": 73,
    "in_stock": True,
    "store": {"city": "Turin", "tags": ["kitchen", "home"]},
}
TOOL_ARGUMENTS: dict[str, Any] = {"city": "Paris", "days": 3, "options": {"unit": "celsius"}}


def _completion(message: dict[str, Any], finish: str, completion_tokens: int) -> bytes:
    data = {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "bench",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 60, "completion_tokens": completion_tokens, "total_tokens": 60 + completion_tokens},
    }
    return json.dumps(data, ensure_ascii=False).encode()


def _text(content: str) -> bytes:
    return _completion({"role": "assistant", "content": content}, "stop", max(1, len(content) // 4))


def _tool_call() -> bytes:
    call = {
        "id": "call_bench_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": json.dumps(TOOL_ARGUMENTS)},
    }
    return _completion({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls", 24)


REPLIES: dict[bytes, bytes] = {
    b"sentence": _text(SENTENCE),
    b"list": _text(LIST),
    b"json": _text(json.dumps(DOCUMENT)),
    b"fenced": _text("Here it is:\n```json\n" + json.dumps(DOCUMENT, indent=2) + "\n```\nAnything else?"),
    b"tool": _tool_call(),
    b"abstain": _text("I will not send an email: nobody asked me to. I can only describe the send_email tool."),
}
"""The canned answer body for each marker kind; an unknown kind gets ``sentence``."""


def _response(status: int, body: bytes, *, close: bool) -> bytes:
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 413: "Too Large"}
    head = (
        f"HTTP/1.1 {status} {reason.get(status, 'Error')}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        f"connection: {'close' if close else 'keep-alive'}\r\n\r\n"
    )
    return head.encode("ascii") + body


def _error(status: int, message: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": "bench"}}).encode()


class Stats:
    """What the server counts: chat requests answered, and requests held at once."""

    def __init__(self) -> None:
        self.chat = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.connections = 0

    def reset(self) -> None:
        """Start counting again."""
        self.chat = 0
        self.max_in_flight = self.in_flight
        self.connections = 0


class _Connection(asyncio.Protocol):
    def __init__(self, models: bytes, stats: Stats) -> None:
        self.models, self.stats = models, stats
        self.buffer = bytearray()
        self.busy = False
        self.transport: asyncio.Transport | None = None
        self.loop = asyncio.get_running_loop()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.stats.connections += 1

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self._next()

    def _next(self) -> None:
        if self.busy or self.transport is None:
            return
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > _MAX_HEAD:
                self._finish(_response(413, _error(413, "header too large"), close=True), True)
            return
        head = bytes(self.buffer[:end]).split(b"\r\n")
        length, close = 0, False
        for line in head[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value.strip() or b"0")
            elif name == b"connection":
                close = value.strip().lower() == b"close"
        if length > _MAX_BODY:
            self._finish(_response(413, _error(413, "body too large"), close=True), True)
            return
        total = end + 4 + length
        if len(self.buffer) < total:
            return
        body = bytes(self.buffer[end + 4 : total])
        del self.buffer[:total]
        self.busy = True
        self._answer(head[0], body, close)

    def _answer(self, request_line: bytes, body: bytes, close: bool) -> None:
        method, _, rest = request_line.partition(b" ")
        path = rest.partition(b" ")[0].partition(b"?")[0]
        if path == b"/_stats":
            stats = {"chat": self.stats.chat, "max_in_flight": self.stats.max_in_flight}
            stats["connections"] = self.stats.connections
            self._finish(_response(200, json.dumps(stats).encode(), close=close), close)
            return
        if path == b"/_reset":
            self.stats.reset()
            self._finish(_response(200, b"{}", close=close), close)
            return
        route = _ROUTE.match(path)
        if route is None:
            self._finish(_response(404, _error(404, f"no route {path.decode(errors='replace')}"), close=close), close)
            return
        delay = int(route.group(1) or b"0") / 1000.0
        if route.group(3) == b"props":
            reply = _response(200, b"{}", close=close)
        elif route.group(2) == b"models":
            reply = _response(200, self.models, close=close)
        elif method != b"POST":
            reply = _response(405, _error(405, "POST a chat completion"), close=close)
        else:
            reply = _response(200, REPLIES.get(_kind(body), REPLIES[b"sentence"]), close=close)
            self.stats.chat += 1
        self.stats.in_flight += 1
        self.stats.max_in_flight = max(self.stats.max_in_flight, self.stats.in_flight)
        if delay > 0:
            due = self.loop.time() + delay
            self.loop.call_at(due - _WAKE_EARLY, self._reply, reply, close, due)
        else:
            self._reply(reply, close, 0.0)

    def _reply(self, data: bytes, close: bool, due: float) -> None:
        while self.loop.time() < due:  # at most _WAKE_EARLY: the timer woke us early on purpose
            pass
        self.stats.in_flight -= 1
        self._finish(data, close)

    def _finish(self, data: bytes, close: bool) -> None:
        self.busy = False
        if self.transport is None:
            return
        self.transport.write(data)
        if close:
            self.transport.close()
            self.transport = None
        else:
            self._next()


def _kind(body: bytes) -> bytes:
    start = body.rfind(MARKER)
    if start < 0:
        return b""
    start += len(MARKER)
    end = body.find(b">>", start, start + 32)
    return body[start:end] if end > 0 else b""


async def serve(port: int, models: Sequence[str], *, backlog: int = 4096) -> None:
    """Serve on 127.0.0.1:``port`` until SIGTERM or SIGINT; print ``listening on PORT`` when ready."""
    loop = asyncio.get_running_loop()
    stats = Stats()
    listing = json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in models]}).encode()
    server = await loop.create_server(lambda: _Connection(listing, stats), "127.0.0.1", port, backlog=backlog)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    bound = server.sockets[0].getsockname()[1]
    print(f"listening on {bound}", flush=True)
    async with server:
        await stop.wait()


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the options and serve."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free one)")
    parser.add_argument("--models", default="bench-a", help="comma-separated model ids to list")
    args = parser.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.port, models))
    return 0


if __name__ == "__main__":
    sys.exit(main())
