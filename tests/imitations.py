"""A llama.cpp server imitated on 127.0.0.1: slots that serialise requests, ``timings``, ``/props`` and ``/v1/models``.

Usage::

    with LlamaCppImitation(perfect, slots=1, rate=200.0) as server:
        ...  # point a backend at server.base_url ("http://127.0.0.1:PORT/v1")

- ``POST /v1/chat/completions`` asks ``answerer(body, n)`` (the handlers of
  ``tests/answerers.py``) for a :class:`~loopback.Reply`, then waits for one of
  ``slots`` slots and "generates" there: it sleeps ``prompt_tokens / prompt_rate``
  then ``tokens / rate`` seconds and reports both times in llama.cpp's
  ``timings`` (``prompt_n``/``prompt_ms``, ``predicted_n``/``predicted_ms``),
  as measured, with ``tokens`` completion tokens in ``usage``. A request that
  waits for a slot is not timed while it waits, as on the real server.
- ``GET /props`` answers as llama.cpp does (``total_slots``, ``build_info``,
  ``model_path``, ``chat_template_caps``); ``GET /v1/models`` lists ``models``.
- ``timings=False`` leaves ``timings`` out (a server that does not report them);
  ``cut(body)`` True makes that answer end with ``finish_reason: length``.
- ``chats`` counts the chat requests received; every answer has ``Server: llama.cpp``.

:func:`measure` runs the suite against such a server at one level and returns the stored profiles.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from loopback import Reply
from threaded import Served

from tsuka_core.backends.base import BackendConfig
from tsuka_core.engine import results
from tsuka_core.plugins.registry import Registry
from tsuka_core.run.session import RunOptions, RunReport, run_benchmark
from tsuka_core.suite.model import Suite
from tsuka_core.terms import Effort

__all__ = ["LlamaCppImitation", "Notes", "measure"]

Answerer = Callable[[dict[str, Any], int], Reply]


class LlamaCppImitation(Served):
    """A llama.cpp server with ``slots`` slots and a fixed generation ``rate`` (tokens per second)."""

    def __init__(
        self,
        answerer: Answerer,
        *,
        slots: int = 1,
        rate: float = 200.0,
        prompt_rate: float = 2000.0,
        tokens: int = 50,
        prompt_tokens: int = 40,
        models: Sequence[str] = ("smollm2",),
        timings: bool = True,
        caps: Mapping[str, bool] | None = None,
        reasoning_tokens: int | None = None,
        cut: Callable[[dict[str, Any]], bool] | None = None,
    ) -> None:
        self.answerer, self.rate, self.prompt_rate = answerer, rate, prompt_rate
        self.tokens, self.prompt_tokens, self.models = tokens, prompt_tokens, list(models)
        self.timings, self.slots = timings, slots
        self.reasoning_tokens, self.cut = reasoning_tokens, cut
        self.caps = {"supports_tools": True, "supports_parallel_tool_calls": False, **(caps or {})}
        self.chats = 0
        self.paths: list[str] = []
        self._slots = threading.BoundedSemaphore(slots)
        self._lock = threading.Lock()
        self._serve(_handler_for(self))

    def props(self) -> dict[str, Any]:
        """llama.cpp's ``/props`` answer."""
        return {
            "default_generation_settings": {"n_ctx": 4096},
            "total_slots": self.slots,
            "model_alias": self.models[0] if self.models else "",
            "model_path": "/models/imitation-135M.Q4_1.gguf",
            "chat_template_caps": {"supports_reasoning_effort": False, **self.caps},
            "build_info": "b9999-imitation",
        }

    def answer(self, body: dict[str, Any]) -> tuple[int, bytes]:
        """One chat completion: the answerer's reply, generated in a slot, with timings."""
        with self._lock:
            n = self.chats
            self.chats += 1
        reply = self.answerer(body, n)
        if reply.status >= 400:
            return reply.status, reply.render(str(body.get("model", "")), n)
        data = json.loads(reply.render(str(body.get("model", "")), n))
        with self._slots:
            prompt_ms = _sleep_ms(self.prompt_tokens / self.prompt_rate)
            predicted_ms = _sleep_ms(self.tokens / self.rate)
        usage: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.tokens,
            "total_tokens": self.prompt_tokens + self.tokens,
        }
        if self.reasoning_tokens is not None:
            usage["completion_tokens_details"] = {"reasoning_tokens": self.reasoning_tokens}
        data["usage"] = usage
        if self.cut is not None and self.cut(body):
            data["choices"][0]["finish_reason"] = "length"
        if self.timings:
            data["timings"] = {
                "cache_n": 0,
                "prompt_n": self.prompt_tokens,
                "prompt_ms": prompt_ms,
                "predicted_n": self.tokens,
                "predicted_ms": predicted_ms,
            }
        return 200, json.dumps(data).encode()


def _sleep_ms(seconds: float) -> float:
    start = time.perf_counter()
    time.sleep(seconds)
    return (time.perf_counter() - start) * 1000


def _handler_for(server: LlamaCppImitation) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 10

        def log_message(self, format: str, *args: Any) -> None:
            """Stay quiet."""

        def do_GET(self) -> None:
            """``/props``, ``/v1/models``, else 404."""
            path = self.path.rstrip("/")
            server.paths.append(path)
            if path == "/props":
                self._send(200, json.dumps(server.props()).encode())
            elif path == "/v1/models":
                data = [{"id": m, "object": "model", "owned_by": "llamacpp"} for m in server.models]
                self._send(200, json.dumps({"object": "list", "data": data}).encode())
            else:
                self._send(404, b'{"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}}')

        def do_POST(self) -> None:
            """Chat completions."""
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            server.paths.append(self.path)
            body = json.loads(raw) if raw else {}
            self._send(*server.answer(body))

        def _send(self, status: int, payload: bytes) -> None:
            with contextlib.suppress(OSError):
                self.send_response(status)
                self.send_header("Server", "llama.cpp")
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

    return Handler


@dataclass
class Notes:
    """A sweep observer that keeps the notes."""

    notes: list[str] = field(default_factory=list)

    def level_started(self, model: str, effort: Effort, applied: bool, total: int) -> None:
        """Nothing to keep."""

    def test_done(self, model: str, effort: Effort, result: results.TestResult) -> None:
        """Nothing to keep."""

    def note(self, message: str) -> None:
        """Keep the note."""
        self.notes.append(message)


def measure(
    server: LlamaCppImitation,
    store: Path,
    suite: Suite,
    registry: Registry,
    concurrency: int | None,
    models: tuple[str, ...] = ("smollm2",),
    efforts: tuple[Effort, ...] = ("none",),
) -> tuple[RunReport, Notes, dict[str, Any]]:
    """One run against ``server`` (at ``none`` unless ``efforts`` says otherwise): report, notes, stored profiles."""
    config = BackendConfig(base_url=server.base_url, timeout=30.0, retries=0)
    options = RunOptions(
        models=models, backend="openai", config=config, efforts=efforts, store_path=store, concurrency=concurrency
    )
    notes = Notes()
    report = asyncio.run(asyncio.wait_for(run_benchmark(options, suite, registry, notes), 120))
    return report, notes, json.loads(store.read_text())["profiles"] if store.exists() else {}
