"""Credentials in a base URL: every form of user-info and every query value stays out of what tsuka shows or stores."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from history_helpers import invoke, rows
from hypothesis import given, settings
from hypothesis import strategies as st
from loopback import LoopbackServer

from tsuka_core.backends.base import BackendConfig
from tsuka_core.backends.openai import OpenAIBackend
from tsuka_core.errors import BackendError
from tsuka_core.urls import redact_url, url_secrets

pytestmark = pytest.mark.usefixtures("fast_retries")
SECRET = "S3cr3t-Value"


@pytest.mark.parametrize("mark", ["#", "/", "?", "@", "#/?@"])
def test_a_password_holding_url_delimiters_is_never_shown(mark: str) -> None:
    password = f"pa{mark}{SECRET}"
    url = f"http://user:{password}@h.test:8080/v1"
    assert redact_url(url) == "http://h.test:8080/v1"
    assert password in url_secrets(url)
    with pytest.raises(BackendError) as caught:  # only some of these make the URL unusable; none may leak
        OpenAIBackend(BackendConfig(base_url=url.replace(":8080", ":99999")), httpx.AsyncClient())
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://h.test/v1?sig=abc&api-version=2024-06-01", "https://h.test/v1?sig=***&api-version=***"),
        ("https://h.test/v1?flag&x=", "https://h.test/v1?flag&x=***"),
        ("https://h.test/v1#token=abc", "https://h.test/v1"),
        ("http://h.test/v1?email=a@b.test", "http://h.test/v1?email=***"),
        ("http://host.test:8/v1?to=me@x.test", "http://host.test:8/v1?to=***"),
    ],
)
def test_every_query_value_and_the_fragment_are_hidden_and_names_shown(url: str, shown: str) -> None:
    assert redact_url(url) == shown


@settings(max_examples=200, deadline=None)
@given(
    password=st.text(alphabet="abcXYZ09-._~!$&'()*+,;=%:/?#@", min_size=1, max_size=12),
    query=st.text(alphabet="abcXYZ09-._~!$'()*+,;:/?@", min_size=0, max_size=12),
)
def test_no_password_or_query_value_survives_redaction(password: str, query: str) -> None:
    url = f"https://user:{SECRET}{password}@example.test/v1?q={SECRET}{query}"
    assert SECRET not in redact_url(url)


def test_a_query_secret_reaches_no_artefact_of_a_run(tmp_path: Path) -> None:
    store, history = tmp_path / "models_profile.json", tmp_path / "history.sqlite"
    with LoopbackServer(models=["m1"]) as server:
        url = f"{server.base_url}?sig={SECRET}"
        result = invoke(
            "run", "m1", "--base-url", url, "--profiles", store, "--history-db", history, "-e", "none",
            "--json", "--json-file", tmp_path / "run.json", "--junit", tmp_path / "junit.xml",
        )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    shown = result.stdout + result.stderr
    for text in (shown, store.read_text("utf-8"), (tmp_path / "run.json").read_text("utf-8")):
        assert SECRET not in text
    assert json.loads(store.read_text("utf-8"))["profiles"]["m1@none"]["provider"] == f"{server.base_url}?sig=***"
    assert [r["provider"] for r in rows(history, "SELECT provider FROM runs")] == [f"{server.base_url}?sig=***"]
    assert SECRET.encode() not in history.read_bytes()
