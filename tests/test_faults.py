"""Server faults, injected for real on 127.0.0.1: retried ones cost nothing, the rest are named, nothing is lost."""

from __future__ import annotations

import json
import re
import socket
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from answerers import DEFAULT_TESTS, fooled, perfect, tool_shy, which_test
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

from tsuka_core import Registry
from tsuka_core.cli.main import cli
from tsuka_core.suite.loading import default_suite_path
from tsuka_core.suite.model import Suite

DEFAULT_SUITE = default_suite_path()
"""The default suite as installed (in a source checkout, ``benchmarks/``): profiles measured with it are the
default suite's."""
LEVELS = ("none", "low", "medium", "xhigh")
TEST_NAMES = DEFAULT_TESTS


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


pytestmark = pytest.mark.usefixtures("fast_retries")


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


def raw_exchange(base_url: str, body: dict[str, Any], seconds: float = 5.0) -> tuple[bytes, bool]:
    """Send one chat request by hand; read until the server closes, 12 MB came, or ``seconds`` passed.

    Returns the bytes received and whether the server closed the connection.
    """
    port = int(base_url.rsplit(":", 1)[1].split("/", maxsplit=1)[0])
    payload = json.dumps(body).encode()
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(payload)}\r\n\r\n"
    received = bytearray()
    deadline = time.monotonic() + seconds
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(head.encode() + payload)
        while len(received) < 12 * 1024 * 1024 and (left := deadline - time.monotonic()) > 0:
            conn.settimeout(left)
            try:
                chunk = conn.recv(1 << 20)
            except TimeoutError:
                break
            if not chunk:
                return bytes(received), True
            received += chunk
    return bytes(received), False


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
        raw, closed = raw_exchange(server.base_url, body, 1.0 if fault in (Fault.STALL, Fault.TRICKLE_BODY) else 5.0)
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
    assert closed is (fault not in (Fault.STALL, Fault.TRICKLE_BODY, Fault.ENDLESS_BODY))
    if fault is Fault.CLOSE_MID_BODY:
        declared = int(re.search(rb"Content-Length: (\d+)", head).group(1))  # type: ignore[union-attr]
        assert 0 < len(payload) < declared
    elif fault in (Fault.ENDLESS_BODY, Fault.TRICKLE_BODY):
        assert b"Transfer-Encoding: chunked" in head
        assert len(payload) > (10_000_000 if fault is Fault.ENDLESS_BODY else 10)
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
        broken: dict[Fault, Callable[[], bool]] = {
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
    assert time.monotonic() - started < 30  # the trickle goes on far longer unless the deadline cuts it


# --- retryable faults: they cost time, never a result ---------------------------------------------------------------


def test_retryable_faults_at_a_30_percent_rate_leave_every_profile_as_a_fault_free_run(
    tmp_path: Path, suite: Suite, registry: Registry, baseline: dict[str, Any]
) -> None:
    store = tmp_path / "models_profile.json"
    plan = FaultPlan.rate(RETRYABLE, 0.3, seed=2024, max_in_a_row=3)
    with FaultServer(mixed, plan, models=["alpha", "beta"]) as server:
        report, _ = measure(server.base_url, store, suite, registry, retries=5, timeout=1.5)

    injected = server.injected
    assert set(injected) == set(RETRYABLE), injected
    assert sum(injected.values()) >= 20
    assert report.ok, report.failed
    data = stored(store)
    # Stored as each model finishes: which one first depends on where the faults fell.
    assert sorted(data["profiles"]) == sorted(f"{m}@{e}" for m in ("alpha", "beta") for e in LEVELS)
    for key, profile in data["profiles"].items():
        assert comparable(profile) == comparable(baseline["profiles"][key]), key
    assert data["recommendations"] == {m: baseline["recommendations"][m] for m in ("alpha", "beta")}
    assert server.errors == []


@pytest.mark.parametrize("fault", RETRYABLE, ids=lambda f: f.name)
def test_each_retryable_fault_is_tried_again_until_it_clears(
    fault: Fault, tmp_path: Path, suite: Suite, registry: Registry, baseline: dict[str, Any]
) -> None:
    """Every request fails ``times`` times running, then succeeds: with that many retries nothing is lost."""
    times = 1 if fault is Fault.STALL else 3
    store = tmp_path / "models_profile.json"
    with FaultServer(perfect, FaultPlan.rate([fault], 1.0, seed=1, max_in_a_row=times)) as server:
        report, _ = measure(
            server.base_url,
            store,
            suite,
            registry,
            models=["m1"],
            efforts=["none"],
            retries=times,
            timeout=1.0,
            concurrency=8,
        )

    assert report.ok, report.failed
    assert comparable(stored(store)["profiles"]["m1@none"]) == comparable(baseline["profiles"]["m1@none"])
    attempts = Counter(json.dumps(i.body, sort_keys=True) for i, _ in server.log if i.is_chat)
    assert set(attempts.values()) == {times + 1}
    assert server.injected[fault] == (len(attempts) + 1) * times  # the chats and the model list checked first


# --- persistent faults: bounded retries, the test is an error with its cause, the level is not stored -------------

CAUSES = {
    Fault.RATE_LIMITED: r"HTTP 429: rate limit reached, slow down \(gave up after 3 attempts\)",
    Fault.RATE_LIMITED_RETRY_AFTER: r"HTTP 429: rate limit reached, retry later \(gave up after 3 attempts\)",
    Fault.SERVER_ERROR: r"HTTP 500: the model crashed \(gave up after 3 attempts\)",
    Fault.UNAVAILABLE: r"HTTP 503: 503 Service Unavailable \(gave up after 3 attempts\)",
    Fault.STALL: r"timed out after 0\.6 s \(gave up after 3 attempts\)",
    Fault.CLOSE_MID_BODY: r"RemoteProtocolError: peer closed connection without sending complete message body.*"
    r"\(gave up after 3 attempts\)",
    Fault.NOT_JSON: r"the response is not JSON \(it starts '<html>",
    Fault.NO_CHOICES: r"the answer has no choices",
    Fault.EMPTY_CHOICES: r"the answer has no choices",
    Fault.ENDLESS_BODY: r"the response body is larger than [\d,]+ bytes",
    Fault.TRICKLE_BODY: r"timed out after 0\.6 s \(gave up after 3 attempts\)",
}
RETRIED = {*RETRYABLE, Fault.TRICKLE_BODY}


def test_every_persistent_fault_has_a_cause() -> None:
    assert set(CAUSES) == set(PERSISTENT)


@pytest.mark.parametrize("fault", PERSISTENT, ids=lambda f: f.name)
def test_a_persistent_fault_errors_its_test_keeps_the_old_profile_and_lets_the_rest_go_on(
    fault: Fault, tmp_path: Path, suite: Suite, registry: Registry, baseline: dict[str, Any]
) -> None:
    store = tmp_path / "models_profile.json"
    earlier = {"profiles": {"beta@none": baseline["profiles"]["beta@none"]}, "recommendations": {"beta": "none"}}
    store.write_text(json.dumps(earlier, indent=2), encoding="utf-8")
    before = store.read_bytes()
    plan = FaultPlan.always(fault, when=lambda i: i.model == "beta" and belongs_to(i) == "frase_8_parole")
    with FaultServer(mixed, plan, models=["alpha", "beta"], stall_seconds=5) as server:
        base_url = server.base_url
        timeout = 0.6 if fault in (Fault.STALL, Fault.TRICKLE_BODY) else 10.0  # a loaded machine reads 32 MB slowly
        report, heard = measure(
            server.base_url, store, suite, registry, efforts=["none", "low"], retries=2, timeout=timeout, concurrency=8
        )

    assert not report.ok
    assert [line.split()[0] for line in report.failed] == ["beta@none", "beta@low"]
    for line in report.failed:
        assert re.search(
            rf"not stored: frase_8_parole: step 0: POST {re.escape(base_url)}/chat/completions: " + CAUSES[fault],
            line,
        ), line
    for effort in ("none", "low"):
        results = heard.results("beta", effort)
        assert sorted(results) == sorted(TEST_NAMES)
        assert {name for name, r in results.items() if r.status == "error"} == {"frase_8_parole"}
        assert re.search(CAUSES[fault], results["frase_8_parole"].error or "")
    data = stored(store)
    assert list(data["profiles"]) == ["beta@none", "alpha@none", "alpha@low"]
    assert data["profiles"]["beta@none"] == earlier["profiles"]["beta@none"]
    assert data["recommendations"] == {"beta": "none", "alpha": "low"}  # alpha: small at none, medium at low
    assert store.read_bytes() != before  # alpha landed beside it
    for key in ("alpha@none", "alpha@low"):
        assert comparable(data["profiles"][key]) == comparable(baseline["profiles"][key])
    faulted = Counter(json.dumps(i.body, sort_keys=True) for i, f in server.log if f is fault)
    assert len(faulted) == 2  # one request per level: the first step of frase_8_parole
    assert set(faulted.values()) == {3 if fault in RETRIED else 1}
    assert server.errors == []


# --- malformed answers: judged on what can be read, never a crash --------------------------------------------------

DETAILS = {
    Fault.NULL_CONTENT: ("frase_8_parole", "expected 8 words, got 0"),
    Fault.ARGS_NOT_JSON: ("catena_tool_distrattori", "find_customer: tool arguments are not JSON"),
    Fault.ARGS_NULL: ("catena_tool_distrattori", "find_customer: tool arguments are not a JSON object (got null)"),
    Fault.ARGS_SCALAR: ("catena_tool_distrattori", "find_customer: tool arguments are not a JSON object (got number)"),
    Fault.CALL_WITHOUT_FUNCTION: ("tool_write_append", "no tool call"),
    Fault.HUGE_ANSWER: ("frase_8_parole", "expected 8 words, got 2097155"),
    Fault.INVALID_UTF8: ("frase_8_parole", "last word 'river', expected 'river'"),
}


def test_every_malformed_answer_has_an_expected_detail() -> None:
    assert set(DETAILS) == set(MALFORMED)


@pytest.mark.parametrize("fault", MALFORMED, ids=lambda f: f.name)
def test_a_malformed_answer_fails_checks_with_a_detail_and_crashes_nothing(
    fault: Fault, tmp_path: Path, suite: Suite, registry: Registry, baseline: dict[str, Any]
) -> None:
    store = tmp_path / "models_profile.json"
    with FaultServer(perfect, FaultPlan.always(fault)) as server:
        started = time.monotonic()
        report, heard = measure(server.base_url, store, suite, registry, models=["m1"], efforts=["none"], timeout=30)
        elapsed = time.monotonic() - started

    assert report.ok, report.failed  # every answer could be read: the level is measured and stored
    assert elapsed < 60
    results = heard.results("m1", "none")
    assert {r.status for r in results.values()} == {"ok"}
    name, detail = DETAILS[fault]
    details = [c.outcome.detail for s in results[name].steps for c in s.checks]
    assert any(detail in d for d in details), details  # after the kind of failure, where it is plain
    for result in results.values():
        for step in result.steps:
            for check in step.checks:
                assert check.outcome.detail, (result.test.name, check.location)
    expected = {r["name"]: r["score"] for r in baseline["profiles"]["m1@none"]["testResults"]}
    scores = {r["name"]: r["score"] for r in stored(store)["profiles"]["m1@none"]["testResults"]}
    assert all(scores[n] <= expected[n] for n in expected)
    if fault is not Fault.INVALID_UTF8:
        assert scores != expected
    else:
        text = results["frase_8_parole"].steps[0].response.text  # type: ignore[union-attr]
        assert "\ufffd" in text
    assert server.errors == []


# --- the command line: exit 1, the cause named, the earlier profile kept --------------------------------------------


def test_the_command_exits_1_names_the_failed_level_and_keeps_its_profile(
    tmp_path: Path, baseline: dict[str, Any]
) -> None:
    store = tmp_path / "models_profile.json"
    earlier = {"profiles": {"m1@none": baseline["profiles"]["m1@none"]}, "recommendations": {"m1": "none"}}
    store.write_text(json.dumps(earlier, indent=2), encoding="utf-8")
    plan = FaultPlan.always(Fault.SERVER_ERROR, when=lambda i: belongs_to(i) == "json_annidato")
    with FaultServer(perfect, plan) as server:
        result = CliRunner().invoke(
            cli,
            [
                "run",
                "m1",
                "--base-url",
                server.base_url,
                "--profiles",
                str(store),
                "-e",
                "none",
                "-e",
                "low",
                "--retries",
                "1",
            ],
            catch_exceptions=False,
        )

    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    failed = [line for line in result.output.splitlines() if "not measured" in line]
    assert len(failed) == 2
    for line, key in zip(failed, ("m1@none", "m1@low"), strict=True):
        assert key in line
        assert "json_annidato" in line
        assert "HTTP 500: the model crashed (gave up after 2 attempts)" in line
    assert stored(store) == earlier
