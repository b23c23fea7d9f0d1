"""A loopback OpenAI-compatible server for benchmarks: a fixed latency, no compute, hundreds of requests in flight.

Standard library only (asyncio protocols), so it runs with nothing but Python.
Run it as a process: ``python bench/_server.py [--port 0] [--models a,b]``; it
prints ``listening on PORT`` once ready and serves until SIGTERM or SIGINT.

Two kinds of server, by the path (both in one process):

- **llama.cpp** (``[/<ms>ms]/v1``): ``GET /props`` answers llama.cpp's keys, so
  tsuka knows the server times its answers and never streams; each answer is
  one JSON body with llama.cpp's ``timings``.
- **streaming** (``[/<ms>ms]/stream/v1``, as vLLM, hosted APIs, Ollama's
  ``/v1``, LM Studio): ``/props`` is 404, so tsuka streams; a request asking
  ``"stream": true`` gets the same answer as server-sent events (a role chunk,
  the content in pieces, the tool call, the finish reason, usage, ``[DONE]``)
  in one chunked body, keep-alive.

- ``POST .../chat/completions`` answers after ``<ms>`` milliseconds
  (0 without the prefix). The answer is canned, chosen by the marker
  ``<<bench:KIND>>`` found in the request body (see :data:`REPLIES`); no JSON
  is parsed, so serving costs next to nothing.
- ``GET .../v1/models`` lists the models, after ``<ms>`` milliseconds too.
- ``GET /_stats`` returns ``{"chat": n, "streamed": s, "max_in_flight": m,
  "connections": c}`` since the last ``POST /_reset``: how many chat requests
  were answered (and how many of them streamed), the most that were held at
  once (which shows the client's real concurrency) and how many connections
  were accepted (which shows whether the client reuses them).

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
_ROUTE = re.compile(rb"^(?:/(\d{1,6})ms)?(/stream)?(?:/v1/(chat/completions|models)|/(props))/?$")
PROPS = json.dumps(
    {
        "build_info": "b0000-bench",
        "model_path": "/models/bench.gguf",
        "total_slots": 4096,
        "chat_template_caps": {"supports_tools": True, "supports_parallel_tool_calls": True},
    }
).encode()
"""What the llama.cpp kind's ``/props`` says: enough of llama.cpp's keys to be known as it (slots past any -j)."""

SENTENCE = "Every morning the old fisherman walks slowly beside the river."
LIST = "iron\ncopper\nsilver"
DOCUMENT: dict[str, Any] = {
    "cheapest": [{"name": "spoon", "price": 3}, {"name": "mug", "price": 6}, {"name": "tray", "price": 9}],
    "total_cost": 73,
    "in_stock": True,
    "store": {"city": "Turin", "tags": ["kitchen", "home"]},
}
TOOL_ARGUMENTS: dict[str, Any] = {"city": "Paris", "days": 3, "options": {"unit": "celsius"}}


def _usage(completion_tokens: int) -> dict[str, int]:
    return {"prompt_tokens": 60, "completion_tokens": completion_tokens, "total_tokens": 60 + completion_tokens}


def _completion(message: dict[str, Any], finish: str, completion_tokens: int) -> dict[str, Any]:
    timings = {
        "prompt_n": 60,
        "prompt_ms": 6.0,
        "predicted_n": completion_tokens,
        "predicted_ms": 2.0 * completion_tokens,
    }
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "bench",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _usage(completion_tokens),
        "timings": timings,
    }


def _chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> str:
    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1700000000, "model": "bench"}
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return "data: " + json.dumps({**base, "choices": choices, **extra}, ensure_ascii=False) + "\n\n"


def _streamed(completion: dict[str, Any]) -> bytes:
    """``completion`` as a streaming server sends it: chunks, usage, ``[DONE]``, in one chunked HTTP body."""
    choice = completion["choices"][0]
    message = choice["message"]
    events = [_chunk({"role": "assistant"})]
    content = message.get("content") or ""
    step = max(1, len(content) // 8)
    events += [_chunk({"content": content[i : i + step]}) for i in range(0, len(content), step)]
    for index, call in enumerate(message.get("tool_calls") or []):
        head = {"index": index, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"]}}
        events.append(_chunk({"tool_calls": [head]}))
        events.append(
            _chunk({"tool_calls": [{"index": index, "function": {"arguments": call["function"]["arguments"]}}]})
        )
    events.append(_chunk({}, choice["finish_reason"]))
    events.append(_chunk(None, usage=completion["usage"]))
    events.append("data: [DONE]\n\n")
    body = "".join(events).encode()
    head = (
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
        "connection: keep-alive\r\n\r\n"
    )
    return head.encode("ascii") + f"{len(body):x}\r\n".encode("ascii") + body + b"\r\n0\r\n\r\n"


def _text(content: str) -> dict[str, Any]:
    return _completion({"role": "assistant", "content": content}, "stop", max(1, len(content) // 4))


def _tool_call() -> dict[str, Any]:
    call = {
        "id": "call_bench_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": json.dumps(TOOL_ARGUMENTS)},
    }
    return _completion({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls", 24)


_ANSWERS: dict[bytes, dict[str, Any]] = {
    b"sentence": _text(SENTENCE),
    b"list": _text(LIST),
    b"json": _text(json.dumps(DOCUMENT)),
    b"fenced": _text("Here it is:\n```json\n" + json.dumps(DOCUMENT, indent=2) + "\n```\nAnything else?"),
    b"tool": _tool_call(),
    b"abstain": _text("I will not send an email: nobody asked me to. I can only describe the send_email tool."),
}
REPLIES: dict[bytes, bytes] = {kind: json.dumps(a, ensure_ascii=False).encode() for kind, a in _ANSWERS.items()}
"""The canned answer body for each marker kind; an unknown kind gets ``sentence``."""
STREAMS: dict[bytes, bytes] = {kind: _streamed(answer) for kind, answer in _ANSWERS.items()}
"""The same answers as whole HTTP responses of server-sent events, for the streaming kind."""


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
        self.streamed = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.connections = 0

    def reset(self) -> None:
        """Start counting again."""
        self.chat = 0
        self.streamed = 0
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
            stats = {
                "chat": self.stats.chat,
                "streamed": self.stats.streamed,
                "max_in_flight": self.stats.max_in_flight,
            }
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
        streaming = route.group(2) is not None
        if route.group(4) == b"props":
            reply = (
                _response(404, _error(404, "no /props here"), close=close)
                if streaming
                else _response(200, PROPS, close=close)
            )
        elif route.group(3) == b"models":
            reply = _response(200, self.models, close=close)
        elif method != b"POST":
            reply = _response(405, _error(405, "POST a chat completion"), close=close)
        elif streaming and _STREAM_ASKED.search(body) and not close:
            reply = STREAMS.get(_kind(body), STREAMS[b"sentence"])
            self.stats.chat += 1
            self.stats.streamed += 1
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


_STREAM_ASKED = re.compile(rb'"stream"\s*:\s*true')


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
