"""The proxies of the environment, and ``--proxy``, carry every request of ``tsuka run`` and ``tsuka models``.

httpx sends requests for loopback addresses through a proxy like any others
unless ``NO_PROXY`` names them, so the server here is 127.0.0.1 itself; the
proxy is a real forward proxy on 127.0.0.1 that records what it carries.
"""

from __future__ import annotations

import importlib.util
import socket
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

import pytest
from answerers import perfect
from click.testing import CliRunner, Result
from loopback import LoopbackServer

from tsuka_core.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
CLEAN_ENV: dict[str, str | None] = {
    **dict.fromkeys(PROXY_VARIABLES),
    **{name.lower(): None for name in PROXY_VARIABLES},
    "OPENAI_BASE_URL": None,
    "OPENAI_API_KEY": None,
    "TSUKA_PROFILES": None,
    "TSUKA_LOAD_PLUGINS": None,
}


def _load_recording_proxy() -> ModuleType:
    """The recording proxy, which lives beside the Ollama plugin's own tests (they use it too)."""
    path = ROOT / "plugins_example" / "tsuka-backend-ollama" / "tests" / "recording_proxy.py"
    spec = importlib.util.spec_from_file_location("recording_proxy", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("recording_proxy", module)
    spec.loader.exec_module(module)
    return module


RecordingProxy = _load_recording_proxy().RecordingProxy


def tsuka(env: Mapping[str, str], *args: str | Path) -> Result:
    """Run the ``tsuka`` command in this process with ``env`` and no other proxy setting."""
    runner = CliRunner(env={**CLEAN_ENV, **env})
    return runner.invoke(cli, [str(a) for a in args], catch_exceptions=False, prog_name="tsuka")


def models_then_run(env: Mapping[str, str], server: LoopbackServer, store: Path, *extra: str) -> None:
    """``tsuka models`` then ``tsuka run all -e none`` against ``server``; both must succeed."""
    listed = tsuka(env, "models", "--base-url", server.base_url, *extra)
    assert listed.exit_code == 0, listed.stderr
    assert listed.stdout.split() == ["m1"]
    ran = tsuka(
        env, "run", "all", "-e", "none", "--base-url", server.base_url, "--profiles", store, "--no-history", *extra
    )
    assert ran.exit_code == 0, ran.stderr


def as_proxied(server: LoopbackServer) -> list[str]:
    """What a proxy records for each request ``server`` received: ``METHOD URL``."""
    root = server.base_url.removesuffix("/v1")
    return [f"{request.method} {root}{request.path}" for request in server.requests]


@pytest.mark.usefixtures("fast_retries")
def test_http_proxy_carries_every_request_of_models_and_run(tmp_path: Path) -> None:
    with LoopbackServer(perfect, models=["m1"]) as server, RecordingProxy() as proxy:
        models_then_run({"HTTP_PROXY": proxy.url}, server, tmp_path / "store.json")
        expected = as_proxied(server)
    assert len(server.bodies) >= 7  # one chat at least per test of the default suite
    assert proxy.seen == expected
    assert proxy.refused == []


@pytest.mark.usefixtures("fast_retries")
@pytest.mark.parametrize("variable", ["ALL_PROXY", "http_proxy"])
def test_all_proxy_and_lower_case_names_work_too(tmp_path: Path, variable: str) -> None:
    with LoopbackServer(perfect, models=["m1"]) as server, RecordingProxy() as proxy:
        models_then_run({variable: proxy.url}, server, tmp_path / "store.json")
        expected = as_proxied(server)
    assert proxy.seen == expected


@pytest.mark.usefixtures("fast_retries")
def test_no_proxy_naming_the_server_sends_straight_to_it(tmp_path: Path) -> None:
    with LoopbackServer(perfect, models=["m1"]) as server, RecordingProxy() as proxy:
        models_then_run({"HTTP_PROXY": proxy.url, "NO_PROXY": "127.0.0.1"}, server, tmp_path / "store.json")
    assert len(server.bodies) >= 7
    assert proxy.seen == []


@pytest.mark.usefixtures("fast_retries")
def test_the_proxy_option_carries_every_request_whatever_the_environment_says(tmp_path: Path) -> None:
    with LoopbackServer(perfect, models=["m1"]) as server, RecordingProxy() as proxy:
        env = {"NO_PROXY": "127.0.0.1", "HTTP_PROXY": "http://127.0.0.1:9"}
        models_then_run(env, server, tmp_path / "store.json", "--proxy", proxy.url)
        expected = as_proxied(server)
    assert proxy.seen == expected


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.usefixtures("fast_retries")
def test_a_proxy_that_is_not_there_fails_the_request_rather_than_going_around_it() -> None:
    with LoopbackServer(perfect, models=["m1"]) as server:
        listed = tsuka({"HTTP_PROXY": f"http://127.0.0.1:{_closed_port()}"}, "models", "--base-url", server.base_url)
        assert server.requests == []
    assert listed.exit_code == 1
    assert "cannot connect" in listed.stderr
    assert "Traceback" not in listed.stderr


@pytest.mark.parametrize(
    ("env", "extra", "named"),
    [
        ({"HTTPS_PROXY": "ftp://127.0.0.1:21"}, [], "the proxy of HTTP_PROXY, HTTPS_PROXY or ALL_PROXY cannot be used"),
        ({}, ["--proxy", "ftp://127.0.0.1:21"], "the proxy of --proxy cannot be used: Unknown scheme for proxy URL"),
        ({}, ["--proxy", "http://127.0.0.1:notaport"], "the proxy of --proxy cannot be used: Invalid port"),
    ],
)
def test_a_proxy_that_cannot_be_used_is_a_one_line_error(env: dict[str, str], extra: list[str], named: str) -> None:
    listed = tsuka(env, "models", "--base-url", "http://127.0.0.1:9/v1", *extra)
    assert listed.exit_code == 2
    assert named in listed.stderr
    assert len(listed.stderr.strip().splitlines()) == 1
