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
- It is the loopback server (``tests/loopback.py``) with a plan and an
  injector: the server writes raw HTTP/1.1 on the socket, so it can send what
  no HTTP library would (a body cut off mid-way, invalid UTF-8, a body that
  never ends); a fault closes its connection. It is bounded as that server is.

:func:`measure` runs a whole benchmark against it in-process, bounded in time,
with :func:`openai_registry` (no in-process model needed); :func:`comparable`
strips what differs between two runs of the same answers. The fault tests and
``bench/fault_table.py`` share these.
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loopback import LoopbackServer, Received, Reply, Wire

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


Incoming = Received
"""A request as a plan sees it (the loopback server's :class:`~loopback.Received`)."""


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


class FaultServer(LoopbackServer):
    """The loopback server with a fault plan: every request answered right or broken the way the plan says."""

    def __init__(
        self,
        answerer: Answerer,
        plan: Plan | None = None,
        models: Sequence[str] = ("m1",),
        *,
        max_requests: int = 5000,
        max_seconds: float = 120.0,
        stall_seconds: float = 30.0,
        props: Callable[[], Mapping[str, Any]] | None = None,
    ) -> None:
        super().__init__(
            answerer, models, max_requests=max_requests, max_seconds=max_seconds, stall_seconds=stall_seconds,
            plan=plan or FaultPlan.never(), inject=_inject, no_fault=Fault.NONE, props=props,
        )  # fmt: skip

    def __enter__(self) -> FaultServer:
        super().__enter__()
        return self


def _inject(wire: Wire, fault: Fault, good: bytes, chat: bool) -> bool:
    """Write ``fault`` instead of the ``good`` body; False when there is nothing to inject.

    A status or transport fault may hit any request, a malformed answer only a chat request.
    """
    if fault is Fault.RATE_LIMITED:
        wire.send(429, _error_body("rate limit reached, slow down"))
    elif fault is Fault.RATE_LIMITED_RETRY_AFTER:
        wire.send(429, _error_body("rate limit reached, retry later"), extra={"Retry-After": "0"})
    elif fault is Fault.SERVER_ERROR:
        wire.send(500, _error_body("the model crashed"))
    elif fault is Fault.UNAVAILABLE:
        wire.send(503, b"<html><body><h1>503 Service Unavailable</h1></body></html>", "text/html")
    elif fault is Fault.STALL:
        wire.stall()
    elif fault is Fault.CLOSE_MID_BODY:
        wire.head(200, "application/json", {"Content-Length": str(len(good))})
        wire.sock.sendall(good[: len(good) // 2])
    elif fault in (Fault.NOT_JSON, Fault.NO_CHOICES, Fault.EMPTY_CHOICES):
        wire.send(200, _unreadable(fault), "text/html" if fault is Fault.NOT_JSON else "application/json")
    elif fault in (Fault.ENDLESS_BODY, Fault.TRICKLE_BODY):
        pause = 0.0 if fault is Fault.ENDLESS_BODY else 0.05
        wire.endless(b'{"choices": [{"message": {"content": "', b"x" * (65536 if pause == 0 else 1), pause)
    elif chat and fault is not Fault.NONE:
        wire.send(200, _malformed(fault, json.loads(good)))
    else:
        return False
    return True


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
    "speedFigures",
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
