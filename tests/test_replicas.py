"""Several URLs serving one model: requests spread over the replicas, one profile, a failing replica dropped."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from history_helpers import invoke, stored
from loopback import LoopbackServer, Reply

from tsuka_core.storage.history_query import load_run

TESTS = 24
pytestmark = pytest.mark.usefixtures("fast_retries")


def _suite(folder: Path) -> Path:
    folder.mkdir()
    for index in range(TESTS):
        test = {"name": f"t{index:02d}", "category": "instruction", "prompt": f"Say ok ({index}).",
                "checks": [{"type": "contains", "value": "ok"}]}  # fmt: skip
        (folder / f"t{index:02d}.json").write_text(json.dumps(test))
    return folder


def _project(folder: Path, urls: list[str]) -> Path:
    path = folder / "tsuka.toml"
    listed = ", ".join(f'"{url}"' for url in urls)
    path.write_text(
        f'efforts = ["none"]\nprofiles = "store.json"\nsuite = "suite"\n\n'
        f'[[endpoints]]\nname = "pool"\nbase_urls = [{listed}]\nmodels = ["m1"]\nconcurrency = 2\n',
        encoding="utf-8",
    )
    return path


def _closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def _replicas(folder: Path) -> list[dict[str, Any]]:
    suite = str((folder / "suite").resolve())  # a folder no plugin registers: its profiles have their own section
    profile = stored(folder / "store.json")["suiteProfiles"][suite]["m1@none"]
    found: list[dict[str, Any]] = profile["replicas"]
    return found


def test_requests_are_spread_over_every_replica_into_one_profile(tmp_path: Path) -> None:
    _suite(tmp_path / "suite")
    ok = lambda body, n: Reply.text("ok")  # noqa: E731
    with LoopbackServer(ok) as one, LoopbackServer(ok) as two:
        result = invoke("run", "--config", _project(tmp_path, [one.base_url, two.base_url]))
        counts = [len(one.bodies), len(two.bodies)]
    assert result.exit_code == 0, result.stdout + result.stderr
    assert sum(counts) == TESTS
    assert min(counts) >= TESTS // 4, counts  # both replicas served a fair share
    replicas = _replicas(tmp_path)
    assert [r["requests"] for r in replicas] == counts
    assert sum(r["share"] for r in replicas) == pytest.approx(1.0)
    level = load_run(tmp_path / ".tsuka" / "history.sqlite", "last").levels[0]
    assert [r["requests"] for r in level.record.found("replicas")] == counts  # the history keeps each replica's share


class _InFlight:
    """A handler that holds each answer a while and counts the requests it holds at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0

    def __call__(self, body: Any, n: int) -> Reply:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(0.15)
        with self.lock:
            self.now -= 1
        return Reply.text("ok")


def test_each_replica_holds_at_most_its_own_concurrency_and_all_of_them_are_used_at_once(tmp_path: Path) -> None:
    """Concurrency 2 per replica: each server sees at most 2 requests at once, and both see 2 (4 in all)."""
    _suite(tmp_path / "suite")
    first, second = _InFlight(), _InFlight()
    with LoopbackServer(first) as one, LoopbackServer(second) as two:
        result = invoke("run", "--config", _project(tmp_path, [one.base_url, two.base_url]))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert (first.most, second.most) == (2, 2)


def test_a_replica_left_alone_still_holds_only_its_own_concurrency(tmp_path: Path) -> None:
    """The run's places are both replicas'; once one is dropped, the other still takes only its own 2 at once."""
    _suite(tmp_path / "suite")
    alive = _InFlight()
    with LoopbackServer(alive) as server:
        result = invoke("run", "--config", _project(tmp_path, [_closed_port(), server.base_url]))
        served = len(server.bodies)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert served == TESTS
    assert alive.most == 2


def test_a_failing_replica_is_dropped_with_a_note_and_the_others_finish(tmp_path: Path) -> None:
    _suite(tmp_path / "suite")
    with LoopbackServer(lambda body, n: Reply.text("ok")) as alive:
        result = invoke("run", "--config", _project(tmp_path, [_closed_port(), alive.base_url]))
        served = len(alive.bodies)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "dropped" in result.stdout + result.stderr
    assert served == TESTS
    dead, live = _replicas(tmp_path)
    assert "dropped" in dead
    assert live["requests"] == TESTS


def test_base_url_and_base_urls_together_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "tsuka.toml"
    path.write_text('[[endpoints]]\nname = "x"\nbase_url = "http://a/v1"\nbase_urls = ["http://b/v1", "http://c/v1"]\n')
    result = invoke("run", "--config", path)
    assert result.exit_code == 2
    assert "not both" in result.stderr


def test_base_url_given_twice_spreads_one_run_over_both_servers(tmp_path: Path) -> None:
    """``--base-url`` again on the command line: the same replicas as a project file's base_urls, -j places each."""
    suite = _suite(tmp_path / "suite")
    first, second = _InFlight(), _InFlight()
    with LoopbackServer(first) as one, LoopbackServer(second) as two:
        result = invoke(
            "run", "m1", "-e", "none", "--suite", suite, "--profiles", tmp_path / "store.json", "-j", "2",
            "--base-url", one.base_url, "--base-url", two.base_url,
        )  # fmt: skip
        counts = [len(one.bodies), len(two.bodies)]
    assert result.exit_code == 0, result.stdout + result.stderr
    assert sum(counts) == TESTS
    assert (first.most, second.most) == (2, 2)
    assert [r["requests"] for r in _replicas(tmp_path)] == counts


def test_models_takes_one_base_url() -> None:
    result = invoke("models", "--base-url", "http://127.0.0.1:9/v1", "--base-url", "http://127.0.0.1:10/v1")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "tsuka: error: --base-url: give one server to list its models (its replicas serve the same ones)"
    ]


def test_the_places_note_adds_up_over_the_replicas(tmp_path: Path) -> None:
    """-j 2 over three replicas: 2 in flight at each, 6 in all (not 'the server has 6 slots')."""
    suite = _suite(tmp_path / "suite")
    ok = lambda body, n: Reply.text("ok")  # noqa: E731
    with LoopbackServer(ok) as one, LoopbackServer(ok) as two, LoopbackServer(ok) as three:
        result = invoke(
            "run", "m1", "-e", "none", "--suite", suite, "--profiles", tmp_path / "store.json", "-j", "2",
            "--base-url", one.base_url, "--base-url", two.base_url, "--base-url", three.base_url,
        )  # fmt: skip
    said = result.stdout + result.stderr
    assert result.exit_code == 0, said
    assert "3 replica(s), 2 request(s) in flight each (-j 2): 6 in all" in said
    assert "slot(s)" not in said


def test_a_replicas_own_notes_reach_the_run(tmp_path: Path) -> None:
    """A replica that refuses streaming says so, as a single server does (the note was dropped before)."""
    suite = _suite(tmp_path / "suite")

    def no_stream(body: dict[str, Any], n: int) -> Reply:
        return Reply.error(400, "stream is not supported") if body.get("stream") else Reply.text("ok")

    with LoopbackServer(no_stream) as one, LoopbackServer(no_stream) as two:
        result = invoke(
            "run", "m1", "-e", "none", "--suite", suite, "--profiles", tmp_path / "store.json", "-j", "2",
            "--base-url", one.base_url, "--base-url", two.base_url,
        )  # fmt: skip
    said = result.stdout + result.stderr
    assert result.exit_code == 0, said
    assert "no longer streamed" in said


@pytest.mark.parametrize("urls", [1, 2, 3])
def test_a_misspelt_model_is_refused_before_any_request_with_any_number_of_urls(tmp_path: Path, urls: int) -> None:
    """The replicas are checked as one server is: the model must be among those listed, or exit 2 and nothing asked."""
    suite = _suite(tmp_path / "suite")
    ok = lambda body, n: Reply.text("ok")  # noqa: E731
    servers = [LoopbackServer(ok) for _ in range(urls)]
    for server in servers:
        server.__enter__()
    try:
        options = [arg for server in servers for arg in ("--base-url", server.base_url)]
        result = invoke("run", "m2", "-e", "none", "--suite", suite, "--profiles", tmp_path / "store.json", *options)
        chats = sum(len(server.bodies) for server in servers)
    finally:
        for server in servers:
            server.__exit__(None, None, None)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "'m2' is not among the models" in result.stderr
    assert chats == 0
