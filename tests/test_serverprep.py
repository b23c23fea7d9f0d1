"""Before the sweep: the model list and the server facts asked at once; a listed model's requests go out at once."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from answerers import perfect
from click.testing import CliRunner, Result
from loopback import LoopbackServer, Reply

from tsuka_core import BackendConfig, Registry, RunOptions, run_benchmark
from tsuka_core.backends.embedded import INSTALL_MODEL, MODELS_DIR_ENV, EmbeddedBackend, bundled_model_path
from tsuka_core.backends.openai import OpenAIBackend
from tsuka_core.cli.main import cli
from tsuka_core.engine import results
from tsuka_core.engine.serverprep import prepare, resolve_models
from tsuka_core.errors import UsageError
from tsuka_core.suite.model import Suite
from tsuka_core.terms import Effort

pytestmark = pytest.mark.usefixtures("fast_retries")

SLOW = 0.4
"""Seconds the slow server takes over ``/props`` and ``/v1/models``, and the loopback over each answer."""


class Quiet:
    """A sweep observer that keeps the notes."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def level_started(self, model: str, effort: Effort, applied: bool, total: int) -> None:
        """Nothing to keep."""

    def test_done(self, model: str, effort: Effort, result: results.TestResult) -> None:
        """Nothing to keep."""

    def note(self, message: str) -> None:
        """Keep it."""
        self.notes.append(message)


class SlowServer:
    """``GET /props`` and ``GET /v1/models`` answered after :data:`SLOW` seconds each, with when each came and went."""

    def __init__(self) -> None:
        self.seen: dict[str, tuple[float, float]] = {}
        self.meet: threading.Barrier | None = None
        """When set, each request waits (30 s at most) for the other to arrive: both in flight at once, or broken."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                """Silent."""

            def do_GET(self) -> None:
                """``/props`` (llama.cpp's, four slots) or ``/v1/models`` (``m1``), slowly."""
                came = time.monotonic()
                if server.meet is not None:
                    with contextlib.suppress(threading.BrokenBarrierError):
                        server.meet.wait(timeout=30)
                time.sleep(SLOW)
                if self.path == "/props":
                    body: dict[str, Any] = {"total_slots": 4, "build_info": "b1-slow"}
                else:
                    body = {"object": "list", "data": [{"id": "m1", "object": "model"}]}
                payload = json.dumps(body).encode()
                with contextlib.suppress(OSError):  # a client that stopped waiting (a refused name) has gone
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                server.seen[self.path] = (came, time.monotonic())

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.http.server_address[1]}/v1"


@pytest.fixture
def slow() -> Iterator[SlowServer]:
    server = SlowServer()
    server.thread.start()
    yield server
    server.http.shutdown()
    server.http.server_close()
    server.thread.join(timeout=10)


def prepared(base_url: str, models: list[str]) -> Any:
    """What :func:`prepare` finds for ``models`` at ``base_url`` through the openai backend."""

    async def main() -> Any:
        async with httpx.AsyncClient() as client:
            backend = OpenAIBackend(BackendConfig(base_url=base_url, timeout=10), client)
            return await prepare(backend, models, Quiet())

    return asyncio.run(main())


def test_the_model_list_and_the_server_facts_are_asked_at_the_same_time(slow: SlowServer) -> None:
    slow.meet = threading.Barrier(2)  # each answer waits until the other request has arrived: no clock involved
    found = prepared(slow.base_url, ["m1"])

    assert found.models == ["m1"]
    assert found.listed == {"m1"}
    assert found.facts["m1"].slots == 4
    assert not slow.meet.broken  # asked one after the other, the first would have waited 30 s and broken it


def test_with_all_the_facts_are_asked_for_each_model_the_list_names(slow: SlowServer) -> None:
    found = prepared(slow.base_url, ["all"])

    assert found.models == ["m1"]
    assert found.listed == {"m1"}
    assert found.facts["m1"].version == "b1-slow"


def test_a_name_the_list_does_not_have_is_refused_with_the_closest_one(slow: SlowServer) -> None:
    with pytest.raises(UsageError, match=r"model 'm11' is not among the models .* lists \(m1\); did you mean 'm1'\?"):
        prepared(slow.base_url, ["m11"])


def test_a_name_given_with_all_is_checked_against_the_list_too(slow: SlowServer) -> None:
    with pytest.raises(UsageError, match=r"model 'm2' is not among the models"):
        prepared(slow.base_url, ["all", "m2"])


def arrivals(suite: Suite, registry: Registry, tmp_path: Path, listed: list[str]) -> list[float]:
    """When each chat request of a one-level run of ``m1`` (at most 4 in flight) reached the server."""
    came: list[float] = []

    def slowly(body: dict[str, Any], n: int) -> Reply:
        came.append(time.monotonic())
        return dataclasses.replace(perfect(body, n), delay=SLOW)

    with LoopbackServer(slowly, models=listed) as server:
        options = RunOptions(
            models=["m1"],
            config=BackendConfig(base_url=server.base_url, timeout=10),
            efforts=["none"],
            store_path=tmp_path / "p.json",
            concurrency=4,
        )
        report = asyncio.run(run_benchmark(options, suite, registry, Quiet()))
    assert report.ok, report.failed
    return sorted(came)


def test_a_model_the_server_lists_starts_with_every_request_it_may_send(
    suite: Suite, registry: Registry, tmp_path: Path
) -> None:
    came = arrivals(suite, registry, tmp_path, listed=["m1"])

    assert came[3] - came[0] < SLOW  # four requests in flight before the first answer came back


def test_a_model_no_list_vouches_for_sends_its_first_request_alone(
    suite: Suite, registry: Registry, tmp_path: Path
) -> None:
    came = arrivals(suite, registry, tmp_path, listed=[])

    assert came[1] - came[0] >= SLOW * 0.9  # the second waited for the first answer
    assert came[4] - came[1] < SLOW  # then four at once


# --- the embedded backend: names checked against the models it finds ------------------------------------------------


def invoke(*args: str | os.PathLike[str], models_dir: Path | None = None) -> Result:
    """``tsuka`` in this process, embedded backend (no base URL), models also from ``models_dir``."""
    env = dict.fromkeys(("OPENAI_BASE_URL", "OPENAI_API_KEY", "TSUKA_PROFILES", "TSUKA_HISTORY", MODELS_DIR_ENV))
    if models_dir is not None:
        env[MODELS_DIR_ENV] = str(models_dir)
    return CliRunner(env=env).invoke(cli, [str(a) for a in args], catch_exceptions=False, prog_name="tsuka")


@pytest.fixture
def models_dir(tmp_path: Path) -> Path:
    """A models folder of empty GGUF files: listed by name, never loaded."""
    folder = tmp_path / "models"
    folder.mkdir()
    for name in ("alpha-135M.gguf", "beta-360M.gguf"):
        (folder / name).touch()
    return folder


@pytest.mark.parametrize("names", [["alpha-153M"], ["all", "alpha-153M"]], ids=["named", "with-all"])
def test_an_embedded_model_name_it_does_not_find_is_refused_before_the_sweep(
    names: list[str], models_dir: Path, tmp_path: Path
) -> None:
    store = tmp_path / "p.json"
    result = invoke("run", *names, "--profiles", store, models_dir=models_dir)

    assert result.exit_code == 2, result.output + result.stderr
    said = " ".join(result.stderr.split())
    assert "model 'alpha-153M' is not among the models backend 'embedded' lists (" in said
    assert "did you mean 'alpha-135M'?" in said
    assert "test runs" not in result.output + result.stderr  # no level was started
    assert not store.exists()
    assert not (tmp_path / ".tsuka").exists()  # nothing recorded either


def test_a_gguf_path_is_taken_as_the_model_without_being_listed(
    models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(models_dir / "beta-360M.gguf")
    monkeypatch.setenv(MODELS_DIR_ENV, str(models_dir))

    async def main() -> tuple[list[str], frozenset[str]]:
        async with httpx.AsyncClient() as client:
            return await resolve_models(EmbeddedBackend(BackendConfig(), client), [path, "alpha-135M"])

    models, listed = asyncio.run(main())
    assert models == [path, "alpha-135M"]
    assert listed == {"alpha-135M"}  # the path's first request still goes alone


@pytest.mark.model
def test_a_mistyped_name_of_the_bundled_model_is_refused_with_its_name(tmp_path: Path) -> None:
    bundled = bundled_model_path()
    if bundled is None:
        pytest.skip(f"the bundled SmolLM2 model is not installed: {INSTALL_MODEL}")
    result = invoke("run", "SmolLM2-135M-Instruct", "--profiles", tmp_path / "p.json")

    assert result.exit_code == 2, result.output + result.stderr
    said = " ".join(result.stderr.split())
    assert f"did you mean {bundled.stem!r}?" in said
