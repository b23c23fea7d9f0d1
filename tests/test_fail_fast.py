"""A server that refuses a model outright (401, 403, 404) costs one request for it, and one clear line."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from answerers import perfect
from click.testing import CliRunner, Result
from loopback import LoopbackServer, Reply

from tsuka_core.cli.main import cli

CLEAN_ENV = dict.fromkeys(("OPENAI_BASE_URL", "OPENAI_API_KEY", "TSUKA_PROFILES", "TSUKA_HISTORY"))


def invoke(*args: str | os.PathLike[str]) -> Result:
    """Run ``tsuka`` in this process with a clean environment."""
    return CliRunner(env=CLEAN_ENV).invoke(cli, [str(a) for a in args], catch_exceptions=False, prog_name="tsuka")


def refuse_with(status: int) -> Callable[[dict[str, Any], int], Reply]:
    """A chat handler refusing every request with ``status``."""

    def refuse(body: dict[str, Any], n: int) -> Reply:
        return Reply.error(status, "invalid api key" if status < 404 else "model not found")

    return refuse


NO_KEY = "no API key was sent: OPENAI_API_KEY is not set"


@pytest.mark.parametrize(("status", "said"), [(401, NO_KEY), (403, NO_KEY), (404, "base URL")])
def test_a_refusing_answer_stops_each_model_after_one_request(status: int, said: str, tmp_path: Path) -> None:
    """A server with no model list to vouch for the names: each model's first request goes alone."""
    store = tmp_path / "p.json"
    with LoopbackServer(refuse_with(status), models=[]) as server:
        argv = ["alpha", "beta", "--base-url", server.base_url, "--profiles", store, "-j", "4", "--retries", "0"]
        result = invoke("run", *argv)

    assert result.exit_code == 1
    assert Counter(body["model"] for body in server.bodies) == {"alpha": 1, "beta": 1}
    said_all = " ".join((result.output + result.stderr).split())  # rich wraps long lines
    assert said_all.count(f"HTTP {status}") == 2, said_all  # one line per model
    assert "alpha: stopped after the first answer, no further request sent" in said_all
    assert said in said_all
    assert not store.exists()


@pytest.mark.parametrize("status", [401, 403, 404])
def test_a_listed_model_that_is_refused_is_stopped_within_one_round_of_requests(status: int, tmp_path: Path) -> None:
    """A model the server lists starts at full concurrency; a refusal still stops it, each model said once."""
    store = tmp_path / "p.json"
    with LoopbackServer(refuse_with(status), models=["alpha", "beta"]) as server:
        result = invoke("run", "all", "--base-url", server.base_url, "--profiles", store, "-j", "4", "--retries", "0")

    assert result.exit_code == 1
    sent = Counter(body["model"] if isinstance(body, dict) else "cut" for body in server.bodies)
    assert {"alpha", "beta"} <= set(sent), sent  # "cut": a request cancelled while its body was on its way
    assert max(sent.values()) <= 4, sent  # per model: those in flight when its first refusal came back, at most
    said_all = " ".join((result.output + result.stderr).split())
    assert said_all.count(f"HTTP {status}") == 2, said_all
    assert "beta: stopped after the first answer, no further request sent" in said_all
    assert not store.exists()


def test_an_error_that_may_not_repeat_lets_the_other_requests_go(tmp_path: Path) -> None:
    def first_fails(body: dict[str, Any], n: int) -> Reply:
        return Reply.error(500, "the model crashed") if n == 0 else perfect(body, n)

    store = tmp_path / "p.json"
    with LoopbackServer(first_fails, models=["alpha"]) as server:
        result = invoke(
            "run", "alpha", "--base-url", server.base_url, "--profiles", store, "-e", "none", "--retries", "0"
        )

    assert result.exit_code == 1
    assert len(server.bodies) > 7  # every test was sent; one errored
    assert "alpha@none not stored" in result.output + result.stderr


def test_a_level_with_no_measured_test_shows_no_tier(tmp_path: Path) -> None:
    """A server that is down: every test errors; neither the run nor ``tsuka runs`` calls the level small."""
    with LoopbackServer(perfect) as server:
        gone = server.base_url  # nothing listens there once the server has stopped
    store = tmp_path / "p.json"
    result = invoke("run", "mymodel", "--base-url", gone, "--profiles", store, "-e", "none", "--retries", "0")

    assert result.exit_code == 1
    said = result.output + result.stderr
    assert "mymodel@none  tier unmeasured" in said
    assert "no test was measured" in said
    assert "small" not in said
    runs = invoke("runs", "--history-db", tmp_path / ".tsuka" / "history.sqlite")
    assert "mymodel@none unmeasured" in runs.output, runs.output
    assert "small" not in runs.output
