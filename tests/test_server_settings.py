"""One settings type for the server a run reaches: the command line's and an endpoint's give the same configuration."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tsuka_core.errors import UsageError
from tsuka_core.run.config import ServerSettings
from tsuka_core.run.project_model import Endpoint

URL = "http://127.0.0.1:9/v1"
REPLICAS = ["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"]


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUN_KEY", "sk-run-0000000000")
    monkeypatch.setenv("HOSTED_KEY", "sk-hosted-1111111111")
    monkeypatch.delenv("NOT_SET_KEY", raising=False)


def test_an_endpoint_configures_its_server_as_the_same_flags_would() -> None:
    run = ServerSettings.of({"timeout": 12.5, "retries": 1, "max_tokens": 64, "backend_option": ("mode=fast",)})
    endpoint = Endpoint(name="hosted", base_url=URL, api_key_env="HOSTED_KEY", options={"stream": True, "n": 2})
    flags = run.model_copy(update={"base_url": (URL,), "api_key_env": "HOSTED_KEY"})
    flags = flags.model_copy(update={"backend_option": (*run.backend_option, "stream=true", "n=2")})

    from_endpoint, from_flags = run.for_endpoint(endpoint).config(), flags.config()

    assert replace(from_endpoint, api_key_from=None) == replace(from_flags, api_key_from=None)
    assert from_endpoint.api_key == "sk-hosted-1111111111"
    assert from_endpoint.api_key_from == "HOSTED_KEY (api_key_env of endpoint hosted)"
    assert from_endpoint.options == {"mode": "fast", "stream": "true", "n": "2"}
    assert (from_endpoint.timeout, from_endpoint.retries, from_endpoint.max_tokens) == (12.5, 1, 64)


def test_an_endpoints_own_option_wins_and_the_runs_key_stays_unless_it_names_one() -> None:
    run = ServerSettings.of({"base_url": "http://127.0.0.1:1/v1", "api_key_env": "RUN_KEY", "backend_option": ("n=1",)})

    config = run.for_endpoint(Endpoint(name="local", base_url=URL, options={"n": 3})).config()

    assert (config.base_url, config.options, config.api_key, config.api_key_from) == (
        URL, {"n": "3"}, "sk-run-0000000000", "RUN_KEY",
    )  # fmt: skip


def test_an_endpoints_replicas_and_a_server_of_its_own() -> None:
    run = ServerSettings.of({"base_url": ("http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1")})

    replicated = run.for_endpoint(Endpoint(name="pair", base_urls=REPLICAS))
    embedded = run.for_endpoint(Endpoint(name="here", backend="embedded"))

    assert (replicated.replicas, replicated.config().base_url) == (tuple(REPLICAS), REPLICAS[0])
    assert (embedded.replicas, embedded.config().base_url) == ((), None)  # the run's servers are not its own


def test_an_endpoint_whose_key_variable_is_unset_is_one_line_naming_it() -> None:
    settings = ServerSettings.of({}).for_endpoint(Endpoint(name="hosted", base_url=URL, api_key_env="NOT_SET_KEY"))

    with pytest.raises(UsageError) as raised:
        settings.config()

    assert str(raised.value) == (
        "endpoint hosted: api_key_env names NOT_SET_KEY, which is not set; set NOT_SET_KEY to its API key"
    )
