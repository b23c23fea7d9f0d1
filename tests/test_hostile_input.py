"""Model output and test files are untrusted: hostile ones cost bounded time and memory and end in a clear outcome."""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import re
import select
import signal
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from answerers import perfect
from click.testing import CliRunner
from faultserver import FaultServer, measure, openai_registry
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from loopback import Reply

from tsuka_core import Answer, CheckType, Outcome, Registry, ToolCall, extract_json
from tsuka_core.backends.http import JsonReply, request_json, server_message
from tsuka_core.backends.openai import parse_completion
from tsuka_core.cli.main import cli
from tsuka_core.errors import RequestError, SuiteError
from tsuka_core.judge.answer import normalise_tool_call, parse_arguments, strip_reasoning
from tsuka_core.judge.checks import run_check
from tsuka_core.judge.patterns import DEFAULT_TIMEOUT
from tsuka_core.suite.loading import MAX_TEST_FILE_BYTES, load_suite
from tsuka_core.urls import redact_url

MB = 1024 * 1024
BOUND = 10.0
"""Seconds any hostile input may cost (generous for a loaded machine; the quadratic cases took minutes to hours)."""
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def registry() -> Registry:
    return openai_registry()


def check(registry: Registry, type_name: str, **params: Any) -> CheckType[Any]:
    check_type = registry.check_type(type_name)
    assert check_type is not None
    return check_type(check_type.params_model.model_validate(params))


def within(seconds: float, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in a forked child, which is killed (and the test failed) when it takes longer than ``seconds``."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, send the pickled result, leave without any clean-up of the parent's
        os.close(read)
        try:
            payload = pickle.dumps(("returned", fn(*args)))
        except BaseException as exc:
            payload = pickle.dumps(("raised", f"{type(exc).__name__}: {exc}"))
        with os.fdopen(write, "wb") as pipe:
            pipe.write(payload)
        os._exit(0)
    os.close(write)
    deadline = time.monotonic() + seconds
    received = bytearray()
    try:
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([read], [], [], left)
            if ready and not (chunk := os.read(read, 1 << 20)):
                break
            if ready:
                received += chunk
        else:
            os.kill(pid, signal.SIGKILL)
            pytest.fail(f"{getattr(fn, '__name__', fn)} took longer than {seconds:g} s")
    finally:
        os.close(read)
        os.waitpid(pid, 0)
    kind, value = pickle.loads(bytes(received))
    assert kind == "returned", value
    return value


# --- regular expressions are time-limited --------------------------------------------------------------------------

CATASTROPHIC = r"(a+)+$"
ONE_MB_OF_A = "a" * MB + "b"


@pytest.mark.parametrize("type_name", ["regex", "not_regex", "tool_arg_regex"])
def test_a_catastrophic_pattern_on_a_1_mb_answer_ends_as_errored_within_its_limit(
    registry: Registry, type_name: str
) -> None:
    params: dict[str, Any] = {"value": CATASTROPHIC}
    calls: tuple[ToolCall, ...] = ()
    if type_name == "tool_arg_regex":
        params["arg"] = "text"
        calls = (ToolCall("call_0", "f", {"text": ONE_MB_OF_A}),)
    subject = check(registry, type_name, **params)
    cpu, wall = time.process_time(), time.monotonic()
    outcome = run_check(subject, Answer(ONE_MB_OF_A, calls))
    cpu, wall = time.process_time() - cpu, time.monotonic() - wall

    assert outcome == Outcome("errored", f"regex search exceeded {DEFAULT_TIMEOUT:g} s")
    assert cpu < DEFAULT_TIMEOUT + 0.5  # the limit is on the search's own work; a busy machine stretches the wall
    assert wall < BOUND


def write_suite(folder: Path, tests: dict[str, dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in tests.items():
        (folder / name).write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_a_catastrophic_pattern_in_a_run_errors_its_check_and_the_run_goes_on(
    tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    folder = write_suite(
        tmp_path / "suite",
        {
            "10_redos.json": {
                "name": "redos",
                "category": "instruction",
                "prompt": "Say a lot of a.",
                "checks": [{"type": "regex", "value": CATASTROPHIC}, {"type": "not_empty"}],
            }
        },
    )
    suite = load_suite(folder, registry)
    with FaultServer(lambda body, n: Reply.text(ONE_MB_OF_A)) as server:
        report, heard = measure(server.base_url, tmp_path / "p.json", suite, registry, models=["m1"], efforts=["none"])

    assert report.ok
    (result,) = heard.results("m1", "none").values()
    outcomes = [c.outcome.status for c in result.steps[0].checks]
    assert outcomes == ["errored", "passed"]
    assert report.profiles["m1@none"]["testResults"] == [{"name": "redos", "category": "instruction", "score": 0.5}]


# --- deep nesting and huge answers cost bounded time ---------------------------------------------------------------

DEEP = "[" * 200_000 + "]" * 200_000
HOSTILE_TEXTS = {
    "deep-array": DEEP,
    "deep-object": '{"a":' * 100_000 + "1" + "}" * 100_000,
    "open-braces": "{" * MB,
    "open-brackets": "[" * MB,
    "braces-then-prose": "{" * 300 + "x" * MB,
    "key-quotes": '{"' * (MB // 2),
    "prose-with-braces": "word { " * (MB // 7),
    "unterminated-string": '{"a": "' + "x" * MB,
    "think-open": "<think>" * (MB // 7),
    "think-close": "</think>" * (MB // 8),
    "fences": "```json\n{" * (MB // 9),
    "one-long-token": "a" + "!" * MB + "b",
    "ten-mb-prose": "The quick brown fox jumps over the lazy dog. " * (10 * MB // 45),
}
ALL_CHECKS: list[tuple[str, dict[str, Any]]] = [
    ("word_count", {"value": 8}),
    ("line_count", {"value": 3}),
    ("first_word", {"value": "Every"}),
    ("last_word", {"value": "river"}),
    ("contains", {"value": "{"}),
    ("not_contains", {"value": "rosso"}),
    ("regex", {"value": r"^\s*[\[{]", "flags": "m"}),
    ("not_regex", {"value": r"[A-Z]"}),
    ("not_empty", {}),
    ("json_valid", {}),
    ("json_path_equals", {"path": "a.b", "value": 1}),
    ("json_path_type", {"path": "a", "value": "object"}),
    ("json_path_length", {"path": "[*]", "value": 2}),
    ("tool_called", {"value": "f"}),
    ("tool_not_called", {}),
    ("tool_arg_equals", {"arg": "path", "value": "x"}),
    ("tool_arg_regex", {"arg": "path", "value": "x"}),
]


def judge_all(checks: list[CheckType[Any]], content: str) -> list[str]:
    """What the runner does with one answer whose text and tool arguments are ``content``: every check's status."""
    call = normalise_tool_call({"id": "c", "function": {"name": "f", "arguments": content}}, 0)
    answer = Answer(strip_reasoning(content), (call,) if call else ())
    return [run_check(c, answer).status for c in checks]


@pytest.mark.parametrize("name", list(HOSTILE_TEXTS), ids=list(HOSTILE_TEXTS))
def test_a_hostile_answer_is_judged_by_every_check_in_bounded_time(registry: Registry, name: str) -> None:
    checks = [check(registry, t, **p) for t, p in ALL_CHECKS]
    statuses = within(BOUND, judge_all, checks, HOSTILE_TEXTS[name])
    assert set(statuses) <= {"passed", "failed", "errored"}


@pytest.mark.parametrize("name", ["deep-array", "open-braces", "think-open"])
def test_reading_a_hostile_answer_costs_bounded_memory(name: str) -> None:
    text = HOSTILE_TEXTS[name]
    tracemalloc.start()
    try:
        extract_json(text + " ")  # a text of its own: nothing cached
        parse_arguments(text)
        strip_reasoning(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * MB, f"{peak / MB:.0f} MB"


def test_deeply_nested_tool_arguments_fail_their_checks_with_a_detail(registry: Registry) -> None:
    call = normalise_tool_call({"id": "c", "function": {"name": "f", "arguments": DEEP}}, 0)
    assert call is not None
    assert call.arguments_problem == "tool arguments are nested too deeply to read"
    outcome = run_check(check(registry, "tool_arg_equals", arg="path", value="x"), Answer("", (call,)))
    assert outcome == Outcome("failed", "f: tool arguments are nested too deeply to read")


@pytest.mark.usefixtures("fast_retries")
def test_deep_nesting_in_a_live_answer_is_judged_and_in_the_body_is_a_request_error(
    tmp_path: Path, registry: Registry
) -> None:
    suite = load_suite(Path(__file__).resolve().parents[1] / "benchmarks", registry)

    def nested(body: dict[str, Any], n: int) -> Reply:
        good = perfect(body, n)
        if good.tool_calls:  # tool arguments nested 200,000 deep
            return Reply.tool_call(good.tool_calls[0][0], DEEP)
        if "kitchen items" in str(body["messages"][-1]["content"]):  # a body nested too deep to parse
            return Reply.body(b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
        return Reply.text(DEEP)  # answer text nested 200,000 deep

    with FaultServer(nested) as server:
        started = time.monotonic()
        report, heard = measure(server.base_url, tmp_path / "p.json", suite, registry, models=["m1"], efforts=["none"])
        elapsed = time.monotonic() - started

    assert elapsed < 60
    results = heard.results("m1", "none")
    assert results["json_prodotti"].status == "error"
    assert "the response is not JSON" in (results["json_prodotti"].error or "")
    assert {r.status for n, r in results.items() if n != "json_prodotti"} == {"ok"}
    details = [c.outcome.detail for s in results["catena_tool_distrattori"].steps for c in s.checks]
    assert any(d.endswith("find_customer: tool arguments are nested too deeply to read") for d in details), details
    (failed,) = report.failed
    assert failed.startswith("m1@none not stored: json_prodotti: step 0: ")


# --- hostile test files: clear errors, bounded reading ---------------------------------------------------------------

VALID = {"name": "ok", "category": "instruction", "prompt": "Hi", "checks": [{"type": "not_empty"}]}


def bad_files(folder: Path) -> dict[str, str]:
    """Write one hostile test file of each kind; return the line each must be reported with."""
    folder.mkdir()
    (folder / "01_valid.json").write_text(json.dumps(VALID), encoding="utf-8")
    with (folder / "02_huge.json").open("wb") as handle:
        handle.truncate(64 * MB)  # sparse: 64 MB that cost no disk
    (folder / "03_latin1.json").write_bytes(b'{"name": "caf\xe9", "category": "instruction"}')
    (folder / "04_nan.json").write_text('{"name": "n", "weight": NaN}', encoding="utf-8")
    (folder / "05_array.json").write_text("[1, 2]", encoding="utf-8")
    (folder / "06_string.json").write_text('"a test"', encoding="utf-8")
    (folder / "07_null.json").write_text("null", encoding="utf-8")
    (folder / "08_deep.json").write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    (folder / "09_binary.json").write_bytes(bytes(range(256)) * 4)
    return {
        "02_huge.json": f"over the {MAX_TEST_FILE_BYTES} byte limit for a test file",
        "03_latin1.json": "03_latin1.json: not UTF-8 (byte 13)",
        "04_nan.json": "04_nan.json: not valid JSON: NaN is not JSON",
        "05_array.json": "05_array.json: a test file must hold a JSON object, got array",
        "06_string.json": "06_string.json: a test file must hold a JSON object, got string",
        "07_null.json": "07_null.json: a test file must hold a JSON object, got null",
        "08_deep.json": "08_deep.json: not valid JSON: JSON nested too deeply",
        "09_binary.json": "09_binary.json: not UTF-8",
    }


def test_hostile_test_files_are_reported_by_validate_one_line_each(tmp_path: Path) -> None:
    expected = bad_files(tmp_path / "suite")
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "suite")], catch_exceptions=False)

    assert result.exit_code == 2
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    for file, message in expected.items():
        (line,) = [line for line in lines if line.startswith(file)]
        assert message in line, line
    assert lines[-1] == f"tsuka: {len(expected)} problem(s) in the suite; nothing was run"


def test_a_huge_test_file_is_refused_without_reading_it_whole(tmp_path: Path, registry: Registry) -> None:
    bad_files(tmp_path / "suite")
    tracemalloc.start()
    try:
        with pytest.raises(SuiteError):
            load_suite(tmp_path / "suite", registry)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < MAX_TEST_FILE_BYTES * 2, f"{peak / MB:.0f} MB read to refuse a 64 MB file"


# --- fuzzing what the server sends ---------------------------------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=25,
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "role": st.just("assistant") | json_scalars,
        "content": json_values,
        "reasoning_content": json_values,
        "tool_calls": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "id": json_values,
                    "type": json_values,
                    "function": st.fixed_dictionaries(
                        {}, optional={"name": json_values, "arguments": json_values | json_values.map(json.dumps)}
                    )
                    | json_values,
                },
            )
            | json_values,
            max_size=3,
        )
        | json_values,
    },
)
completions = (
    st.fixed_dictionaries(
        {},
        optional={
            "choices": st.lists(st.fixed_dictionaries({}, optional={"message": messages | json_values}) | json_values)
            | json_values,
            "usage": st.fixed_dictionaries(
                {}, optional={"completion_tokens": json_values, "prompt_tokens": json_values}
            )
            | json_values,
        },
    )
    | json_values
)


@FUZZ
@given(data=completions)
def test_any_completion_body_is_an_answer_or_a_request_error(data: Any) -> None:
    try:
        response = parse_completion(JsonReply(data, 200, 0.1, 1), "POST x")
    except RequestError as exc:
        message = str(exc)
    else:
        message = ""
    if message:
        assert "\n" not in message
        return
    assert isinstance(response.text, str)
    assert response.text == response.text.strip()
    assert all(call.name and isinstance(call.name, str) for call in response.tool_calls)
    assert isinstance(response.completion_tokens, int)
    assert response.completion_tokens >= 0


@FUZZ
@given(status=st.sampled_from([200, 201, 204, 301, 400, 404, 418, 429, 500, 503]), body=st.binary(max_size=300))
def test_any_body_and_status_is_a_reply_or_one_line_request_error(status: int, body: bytes) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body, headers={"Retry-After": "0"})

    async def send() -> Any:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
            return await request_json(client, "POST", "http://127.0.0.1:9/v1/chat/completions", body={}, retries=1)

    try:
        reply = asyncio.run(send())
    except RequestError as exc:
        message = str(exc)
    else:
        assert 200 <= reply.status < 300
        return
    assert "\n" not in message
    assert len(message) < 600


@FUZZ
@given(raw=st.binary(max_size=400) | st.text(max_size=400).map(str.encode))
def test_server_message_is_always_one_short_line(raw: bytes) -> None:
    message = server_message(raw, "fallback")
    assert "\n" not in message
    assert 0 < len(message) <= 300


@FUZZ
@given(
    user=st.text(alphabet="abcXYZ09-._~!$&'()*+,;=%", min_size=1, max_size=10),
    password=st.text(alphabet="abcXYZ09-._~!$&'()*+,;=%", min_size=6, max_size=16),
    query=st.sampled_from(["", "?key=", "?api_key=", "?x=1&token="]),
)
def test_redact_url_never_shows_credentials(user: str, password: str, query: str) -> None:
    secret = "S3cr3t" + password
    url = f"https://{user}:{secret}@example.com:8443/v1{query}{secret if query else ''}"
    shown = redact_url(url)
    assert secret not in shown
    assert "@" not in shown.split("/v1")[0]


REFERENCE_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


def reference_strip(content: str) -> str:
    """spec section 3, as a regular expression would do it (quadratic, so only for short texts)."""
    text = REFERENCE_THINK.sub("", content)
    if "<think>" in text:
        text = text[: text.index("<think>")]
    if "</think>" in text:
        text = text[text.rindex("</think>") + len("</think>") :]
    return text.strip()


@FUZZ
@given(text=st.lists(st.sampled_from(["<think>", "</think>", "<thi", "nk>", "</", "a", " ", "\n", "b c"]), max_size=30))
def test_linear_reasoning_removal_agrees_with_the_spec(text: list[str]) -> None:
    content = "".join(text)
    assert strip_reasoning(content) == reference_strip(content)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(alphabet='{}[]":,\\ ntrue0123456789`<>/abc\n', min_size=2000, max_size=20_000))
def test_extracting_json_from_bracket_soup_takes_bounded_time(text: str) -> None:
    started = time.process_time()
    extract_json(text)
    parse_arguments(text)
    assert time.process_time() - started < 3.0  # CPU time: what the extraction costs, whatever the machine's load
