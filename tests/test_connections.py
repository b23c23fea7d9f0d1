"""A run reuses its connections at any concurrency: at most 2 x j connections (and TLS handshakes) for a whole run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from loopback import LoopbackServer, Reply
from relay import CountingRelay
from streaming import StreamingServer

from tsuka_core.cli.main import cli

TESTS = 240
CONCURRENCY = 48
CLEAN_ENV: dict[str, str | None] = dict.fromkeys(
    ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "OPENAI_API_KEY")
)


def _suite(folder: Path, count: int) -> Path:
    """A suite of ``count`` one-step tests, each passed by an answer containing 'ok'."""
    folder.mkdir()
    for index in range(count):
        test = {
            "name": f"t{index:04d}",
            "category": "instruction",
            "prompt": f"Say ok ({index}).",
            "checks": [{"type": "contains", "value": "ok"}],
        }
        (folder / f"t{index:04d}.json").write_text(json.dumps(test))
    return folder


def _run(tmp_path: Path, url: str, env: dict[str, str | None]) -> Result:
    runner = CliRunner(env={**CLEAN_ENV, **env})
    args = ["run", "m1", "-e", "none", "--base-url", url, "-j", str(CONCURRENCY), "--no-history"]
    args += ["--suite", str(_suite(tmp_path / "suite", TESTS)), "--profiles", str(tmp_path / "store.json")]
    return runner.invoke(cli, args, catch_exceptions=False, prog_name="tsuka")


def _port(server: LoopbackServer) -> int:
    return int(server.base_url.rsplit(":", 1)[1].split("/")[0])


@pytest.mark.usefixtures("fast_retries")
def test_a_run_at_high_concurrency_opens_at_most_two_connections_per_request_in_flight(tmp_path: Path) -> None:
    with LoopbackServer(lambda body, n: Reply.text("ok"), max_requests=2000) as server:
        with CountingRelay(_port(server)) as relay:
            result = _run(tmp_path, relay.url, {})
        chats = len(server.bodies)
    assert result.exit_code == 0, result.output
    assert chats == TESTS
    assert relay.accepted <= 2 * CONCURRENCY, f"{relay.accepted} connections for {chats} requests"


@pytest.mark.usefixtures("fast_retries")
def test_a_run_over_https_makes_at_most_two_handshakes_per_request_in_flight(
    tmp_path: Path, certificate: tuple[Path, Path]
) -> None:
    """The CA bundle comes from SSL_CERT_FILE, as a user behind a private CA sets it."""
    with LoopbackServer(lambda body, n: Reply.text("ok"), max_requests=2000) as server:
        with CountingRelay(_port(server), tls=certificate) as relay:
            result = _run(tmp_path, relay.url, {"SSL_CERT_FILE": str(certificate[0])})
        chats = len(server.bodies)
    assert result.exit_code == 0, result.output
    assert chats == TESTS
    assert relay.accepted <= 2 * CONCURRENCY, f"{relay.accepted} TLS handshakes for {chats} requests"


@pytest.mark.usefixtures("fast_retries")
def test_a_streamed_run_reuses_its_connections_as_an_unstreamed_one_does(tmp_path: Path) -> None:
    """A server that reports no timings is streamed: each body is read past [DONE] to its end, connection kept."""
    with StreamingServer(slots=CONCURRENCY, rate=2000.0, first_byte=0.0, tokens=3) as server:
        with CountingRelay(int(server.base_url.rsplit(":", 1)[1].split("/")[0])) as relay:
            result = _run(tmp_path, relay.url, {})
        streamed = [b for b in server.bodies if b.get("stream")]
    assert result.exit_code == 0, result.output
    assert len(streamed) == TESTS  # every answer was streamed
    assert relay.accepted <= 2 * CONCURRENCY, f"{relay.accepted} connections for {len(streamed)} streamed requests"
