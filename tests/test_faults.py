"""Server faults, injected for real on 127.0.0.1: retried ones cost nothing, the rest are named, nothing is lost."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from answerers import fooled, perfect, tool_shy, which_test
from click.testing import CliRunner
from faultserver import (
    MALFORMED,
    PERSISTENT,
    RETRYABLE,
    Fault,
    FaultPlan,
    FaultServer,
    Incoming,
    comparable,
    measure,
    openai_registry,
)
from loopback import Reply

from tsuka_core import Registry, Suite
from tsuka_core.backends import http
from tsuka_core.cli.main import cli
from tsuka_core.suite import load_suite

DEFAULT_SUITE = Path(__file__).resolve().parents[1] / "benchmarks"
LEVELS = ("none", "low", "medium", "xhigh")
TEST_NAMES = (
    "frase_8_parole",
    "lista_vincoli_negativi",
    "json_prodotti",
    "json_annidato",
    "catena_tool_distrattori",
    "trappola_astensione",
    "tool_write_append",
)


def mixed(body: dict[str, Any], n: int) -> Reply:
    """Answers that differ by model and effort, so that tiers, scores and recommendations differ too."""
    model, effort = body.get("model"), body.get("reasoning_effort", "none")
    if model == "alpha":
        answerer = {"none": tool_shy, "low": fooled}.get(effort, perfect)
        return answerer(body, n)
    if model == "beta":
        return fooled(body, n)
    return perfect(body, n)


@pytest.fixture(scope="module")
def registry() -> Registry:
    return openai_registry()


@pytest.fixture(scope="module")
def suite(registry: Registry) -> Suite:
    return load_suite(DEFAULT_SUITE, registry)


@pytest.fixture(autouse=True)
def _fast_and_isolated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http, "BACKOFF_BASE", 0.001)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "TSUKA_PROFILES"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory, suite: Suite, registry: Registry) -> dict[str, Any]:
    """The store after a fault-free run of alpha, beta and m1 at every level."""
    store = tmp_path_factory.mktemp("baseline") / "models_profile.json"
    with FaultServer(mixed, models=["alpha", "beta", "m1"]) as server:
        report, _ = measure(server.base_url, store, suite, registry, models=["alpha", "beta", "m1"])
    assert report.ok, report.failed
    data: dict[str, Any] = json.loads(store.read_text(encoding="utf-8"))
    assert len(data["profiles"]) == 12
    return data


def stored(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def belongs_to(incoming: Incoming) -> str:
    """The default-suite test a chat request belongs to."""
    return which_test(incoming.body)[0]


# --- the fault server itself ----------------------------------------------------------------------------------------


def test_a_rate_plan_is_reproducible_from_its_seed_and_bounded_in_a_row() -> None:
    incomings = [Incoming("POST", "/v1/chat/completions", {"model": "m", "i": i}, i, 0) for i in range(2000)]
    plan = FaultPlan.rate(RETRYABLE, 0.3, seed=11, max_in_a_row=2)
    first = [plan(i) for i in incomings]

    assert first == [FaultPlan.rate(RETRYABLE, 0.3, seed=11, max_in_a_row=2)(i) for i in reversed(incomings)][::-1]
    assert first != [FaultPlan.rate(RETRYABLE, 0.3, seed=12)(i) for i in incomings]
    share = sum(f is not Fault.NONE for f in first) / len(first)
    assert 0.25 < share < 0.35
    assert set(first) == {Fault.NONE, *RETRYABLE}
    third_attempts = [Incoming(i.method, i.path, i.body, i.n, 2) for i in incomings]
    assert {plan(i) for i in third_attempts} == {Fault.NONE}


def raw_exchange(base_url: str, fault: Fault, body: dict[str, Any]) -> bytes:
    """Send one chat request by hand and read whatever comes back until the server closes (or 12 MB)."""
    port = int(base_url.rsplit(":", 1)[1].split("/")[0])
    payload = json.dumps(body).encode()
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(payload)}\r\n\r\n"
    received = bytearray()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(head.encode() + payload)
        with pytest.raises(TimeoutError) if fault in (Fault.STALL, Fault.TRICKLE_BODY) else contextlib.nullcontext():
            conn.settimeout(0.5 if fault in (Fault.STALL, Fault.TRICKLE_BODY) else 5)
            while len(received) < 12 * 1024 * 1024 and (chunk := conn.recv(1 << 20)):
                received += chunk
    return bytes(received)


EIGHT_WORDS = {"model": "m1", "messages": [{"role": "user", "content": "Write a sentence of exactly 8 words."}]}
FIND = {
    "model": "m1",
    "messages": [{"role": "user", "content": "Find the invoices of Daniel Hughes."}],
    "tools": [{"type": "function", "function": {"name": "find_customer"}}],
}


@pytest.mark.parametrize("fault", [f for f in Fault if f is not Fault.NONE], ids=lambda f: f.name)
def test_the_server_sends_each_fault_as_raw_http(fault: Fault) -> None:
    body = FIND if fault.name.startswith(("ARGS", "CALL")) else EIGHT_WORDS
    with FaultServer(perfect, FaultPlan.always(fault), stall_seconds=5) as server:
        raw = raw_exchange(server.base_url, fault, body)
    assert server.injected == Counter({fault: 1})
    assert server.errors == []
    head, _, payload = raw.partition(b"\r\n\r\n")
    status = int(head.split()[1]) if head else 0
    expected_status = {
        Fault.RATE_LIMITED: 429,
        Fault.RATE_LIMITED_RETRY_AFTER: 429,
        Fault.SERVER_ERROR: 500,
        Fault.UNAVAILABLE: 503,
        Fault.STALL: 0,
    }
    assert status == expected_status.get(fault, 200)
    assert (b"Retry-After: 0" in head) is (fault is Fault.RATE_LIMITED_RETRY_AFTER)
    if fault is Fault.CLOSE_MID_BODY:
        declared = int(re.search(rb"Content-Length: (\d+)", head).group(1))  # type: ignore[union-attr]
        assert 0 < len(payload) < declared
    elif fault in (Fault.ENDLESS_BODY, Fault.TRICKLE_BODY):
        assert b"Transfer-Encoding: chunked" in head
        assert len(payload) > (10_000_000 if fault is Fault.ENDLESS_BODY else 0)
    elif fault is Fault.INVALID_UTF8:
        with pytest.raises(UnicodeDecodeError):
            payload.decode("utf-8")
    elif fault is Fault.HUGE_ANSWER:
        assert len(payload) > 10 * 1024 * 1024
    elif fault is Fault.NOT_JSON:
        with pytest.raises(ValueError, match="Expecting value"):
            json.loads(payload)
    elif status == 200:
        message = json.loads(payload).get("choices", [{}])
        broken = {
            Fault.NO_CHOICES: lambda: message == [{}],
            Fault.EMPTY_CHOICES: lambda: message == [],
            Fault.NULL_CONTENT: lambda: message[0]["message"] == {"role": "assistant", "content": None},
            Fault.ARGS_NOT_JSON: lambda: (
                message[0]["message"]["tool_calls"][0]["function"]["arguments"] == "<not json at all>"
            ),
            Fault.ARGS_NULL: lambda: message[0]["message"]["tool_calls"][0]["function"]["arguments"] == "null",
            Fault.ARGS_SCALAR: lambda: message[0]["message"]["tool_calls"][0]["function"]["arguments"] == 42,
            Fault.CALL_WITHOUT_FUNCTION: lambda: "function" not in message[0]["message"]["tool_calls"][0],
        }
        assert broken[fault]()


def test_the_server_is_bounded_in_requests_and_time() -> None:
    with FaultServer(perfect, max_requests=2) as server, httpx.Client(timeout=5) as client:
        codes = [client.post(f"{server.base_url}/chat/completions", json=EIGHT_WORDS).status_code for _ in range(3)]
    assert codes == [200, 200, 503]
    started = time.monotonic()
    with FaultServer(perfect, FaultPlan.always(Fault.TRICKLE_BODY), max_seconds=1.0) as server:
        with httpx.Client(timeout=10) as client, pytest.raises(httpx.RemoteProtocolError):
            client.post(f"{server.base_url}/chat/completions", json=EIGHT_WORDS)  # cut at the deadline
        with httpx.Client(timeout=10) as client:
            assert client.post(f"{server.base_url}/chat/completions", json=EIGHT_WORDS).status_code == 503
    assert time.monotonic() - started < 8
