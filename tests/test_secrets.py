"""The API key and a base URL's credentials go to the server only: no profile, output, log, error or report has them."""

from __future__ import annotations

import asyncio
import base64
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from answerers import perfect
from click.testing import CliRunner
from faultserver import Answerer, Fault, FaultPlan, FaultServer, measure, openai_registry
from loopback import Reply

from tsuka_core import Registry
from tsuka_core.backends.base import BackendConfig, ChatRequest
from tsuka_core.backends.http import StatusError, request_json
from tsuka_core.backends.openai import OpenAIBackend
from tsuka_core.cli.main import cli
from tsuka_core.errors import BackendError, RequestError
from tsuka_core.suite.loading import default_suite_path, load_suite

pytestmark = pytest.mark.usefixtures("fast_retries")

DEFAULT_SUITE = default_suite_path()
"""The default suite as installed (in a source checkout, ``benchmarks/``): profiles measured with it are the
default suite's."""
KEY = "sk-tsuka-test-9f3b7c1d2e4a6b8c0d1e2f3a"
USER = "benchuser"
PASSWORD = "pw-7Hq2-Zx9@Lm"
QUERY_KEY = "qk-51c0ffee-d00d"


def secret_forms() -> list[bytes]:
    """Every form in which one of the secrets could show: as is, percent-encoded, in a Basic header."""
    forms = {
        KEY,
        PASSWORD,
        QUERY_KEY,
        quote(PASSWORD, safe=""),
        base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode(),
    }
    return sorted(form.encode() for form in forms)


def base_url_with_credentials(base_url: str) -> str:
    """``base_url`` with ``user:password@`` and an ``api_key`` query parameter."""
    return base_url.replace("http://", f"http://{USER}:{quote(PASSWORD, safe='')}@") + f"?api_key={QUERY_KEY}"


def leaks(data: bytes) -> list[str]:
    return [form.decode() for form in secret_forms() if form in data]


def reflecting(with_password: bool = True) -> Answerer:
    """alpha is answered right; beta's server echoes every credential it got back in its error, as careless ones do."""

    def answer(body: dict[str, Any], n: int) -> Reply:
        if body.get("model") != "beta":
            return perfect(body, n)
        echo = f"Incorrect API key provided: {KEY}; url /v1/chat/completions?api_key={QUERY_KEY}"
        return Reply.error(401, echo + (f"; auth {USER}:{PASSWORD}" if with_password else ""))

    return answer


@dataclass(frozen=True)
class Done:
    """What one ``tsuka`` command returned and printed."""

    returncode: int
    stdout: bytes
    stderr: bytes


def tsuka(*args: str | os.PathLike[str], key: str | None = KEY) -> Done:
    """``tsuka ARGS`` in this process, with ``OPENAI_API_KEY`` set to ``key`` and no other tsuka setting."""
    env: dict[str, str | None] = {name: None for name in os.environ if name.startswith(("OPENAI_", "TSUKA_"))}
    env["OPENAI_API_KEY"] = key
    result = CliRunner(env=env).invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return Done(result.exit_code, result.stdout_bytes, result.stderr_bytes)


def test_no_artefact_of_a_run_holds_a_secret(tmp_path: Path) -> None:
    """A run with a key, URL credentials and a key in the query, against a server that echoes them all back."""
    store = tmp_path / "models_profile.json"
    outputs: dict[str, bytes] = {}
    with FaultServer(reflecting(), models=["alpha", "beta"]) as server:
        url = base_url_with_credentials(server.base_url)
        unreachable = base_url_with_credentials("http://127.0.0.1:9/v1")
        run = tsuka(
            "run", "all", "--base-url", url, "--profiles", store, "-e", "none", "--retries", "0", "--json",
            "--junit", tmp_path / "junit.xml", "--json-file", tmp_path / "result.json",
        )  # fmt: skip
        outputs["run stdout"], outputs["run stderr"] = run.stdout, run.stderr
        models = tsuka("models", "--base-url", url)
        outputs["models stdout"], outputs["models stderr"] = models.stdout, models.stderr
    seen = [i for i, _ in server.log if i.is_chat]
    with FaultServer(reflecting(with_password=False), models=["alpha", "beta"]) as server:
        keyed = tsuka(  # the key in the query and as a Bearer token, no user:password (which would replace it)
            "run", "all", "--base-url", f"{server.base_url}?api_key={QUERY_KEY}", "--profiles", store, "-e", "low",
            "--retries", "0", "--json",
        )  # fmt: skip
        outputs["keyed stdout"], outputs["keyed stderr"] = keyed.stdout, keyed.stderr
    seen += [i for i, _ in server.log if i.is_chat]
    assert seen
    basic = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert {i.headers.get("authorization") for i in seen} == {f"Basic {basic}", f"Bearer {KEY}"}  # all were sent...
    assert {i.query for i in seen} == {f"api_key={QUERY_KEY}"}
    for done in (run, keyed):  # ...and beta's server echoed them back in an error, which tsuka shows
        assert done.returncode == 1, done.stderr.decode()
        assert b"HTTP 401: Incorrect API key provided: ***" in done.stdout + done.stderr
    refused = tsuka("run", "alpha", "--base-url", unreachable, "--profiles", store, "-e", "none", "--retries", "0")
    outputs["refused stderr"], outputs["refused stdout"] = refused.stderr, refused.stdout
    for args in (("profiles",), ("runs", "--json"), ("show", "last"), ("show", "last", "beta@none"),
                 ("report", "-o", tmp_path / "report.html")):  # fmt: skip
        shown = tsuka(*args, "--profiles", store)
        outputs[" ".join(map(str, args))] = shown.stdout + shown.stderr
    files = {str(p.relative_to(tmp_path)): p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()}

    assert "models_profile.json" in files
    assert "report.html" in files
    assert any(name.endswith(".sqlite") for name in files), sorted(files)
    found = {name: leaks(data) for name, data in {**outputs, **files}.items() if leaks(data)}
    assert found == {}
    assert b"http://127.0.0.1:" in files["models_profile.json"]  # the provider is there, redacted


def test_no_log_line_holds_a_secret(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    registry: Registry = openai_registry()
    suite = load_suite(DEFAULT_SUITE, registry)
    plan = FaultPlan.rate([Fault.SERVER_ERROR, Fault.CLOSE_MID_BODY], 0.3, seed=5, max_in_a_row=2)
    caplog.set_level(logging.DEBUG)
    with FaultServer(reflecting(), plan, models=["alpha", "beta"]) as server:
        report, _ = measure(
            base_url_with_credentials(server.base_url), tmp_path / "p.json", suite, registry, efforts=["none"],
            api_key=KEY,
        )  # fmt: skip
    assert report.failed  # beta's echoed credentials went through an error message
    assert any("HTTP Request: POST" in r.getMessage() for r in caplog.records)  # httpx did log each request
    logged = "\n".join(r.getMessage() for r in caplog.records).encode()
    assert leaks(logged) == []
    assert leaks("\n".join(report.failed).encode()) == []


def test_an_echoed_key_is_masked_in_the_error_and_in_the_server_message() -> None:
    def echo(request: httpx.Request) -> httpx.Response:
        said = f"bad key {request.headers['authorization']} for {request.url}"
        return httpx.Response(401, json={"error": {"message": said}})

    async def send() -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(echo)) as client:
            backend = OpenAIBackend(BackendConfig(base_url=base_url_with_credentials("http://127.0.0.1:9/v1"),
                                                  api_key=KEY), client)  # fmt: skip
            await backend.complete(ChatRequest("m1", [{"role": "user", "content": "hi"}]))

    with pytest.raises(StatusError) as info:
        asyncio.run(send())
    assert leaks(str(info.value).encode()) == []
    assert leaks(info.value.server_message.encode()) == []
    assert "bad key Basic *** for http://benchuser:***@127.0.0.1:9" in str(info.value)


@pytest.mark.parametrize(
    ("key", "what"),
    [
        (KEY + "\u2019", "a non-ASCII character at position 39"),
        (KEY[:10] + " " + KEY[10:], "a space at position 11"),
        (KEY[:5] + "\t" + KEY[5:], "a control character at position 6"),
    ],
    ids=["curly-quote", "space", "tab"],
)
def test_a_key_http_cannot_carry_is_one_line_that_does_not_show_it(key: str, what: str, tmp_path: Path) -> None:
    with FaultServer(perfect) as server:
        done = tsuka("run", "m1", "--base-url", server.base_url, "--profiles", tmp_path / "p.json", "-e", "none",
                     key=key)  # fmt: skip
    assert done.returncode == 2
    stderr = done.stderr.decode()
    assert "Traceback" not in stderr
    (line,) = [line for line in stderr.splitlines() if line.startswith("tsuka:")]
    assert f"the API key (OPENAI_API_KEY) holds {what}" in line
    assert KEY[:10] not in stderr + done.stdout.decode()
    assert server.log == []


def test_white_space_around_a_key_is_dropped_not_sent() -> None:
    backend = OpenAIBackend(BackendConfig(base_url="http://127.0.0.1:9/v1", api_key=f"  {KEY}\n"), httpx.AsyncClient())
    assert backend.api_key == KEY


def test_a_base_url_with_a_port_out_of_range_is_refused_without_its_credentials() -> None:
    with pytest.raises(BackendError) as info:
        OpenAIBackend(BackendConfig(base_url=f"http://{USER}:{PASSWORD}@127.0.0.1:99999/v1"), httpx.AsyncClient())
    assert "got 'http://127.0.0.1:99999/v1'" in str(info.value)
    assert leaks(str(info.value).encode()) == []


def test_an_unreachable_server_is_named_by_its_redacted_url() -> None:
    url = f"http://{USER}:{quote(PASSWORD, safe='')}@127.0.0.1:9/v1/chat/completions?api_key={QUERY_KEY}"

    async def send() -> None:
        async with httpx.AsyncClient() as client:
            await request_json(client, "POST", url, body={}, retries=0, secrets=[KEY, PASSWORD, QUERY_KEY])

    with pytest.raises(RequestError) as info:
        asyncio.run(send())
    assert str(info.value).startswith("POST http://127.0.0.1:9/v1/chat/completions?api_key=***: cannot connect")
    assert leaks(str(info.value).encode()) == []
