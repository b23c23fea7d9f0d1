"""The response cache: opt-in, keyed by everything that shapes a request, never holding errors, same scores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from answerers import by_model, failing, perfect
from history_helpers import history_of, invoke, rows, stored, without_tested_at
from loopback import LoopbackServer

from tsuka_core.backends.base import BackendConfig, ChatRequest
from tsuka_core.backends.openai import OpenAIBackend
from tsuka_core.storage.cache import request_key

pytestmark = pytest.mark.usefixtures("fast_retries")


def run(server: LoopbackServer, store: Path, *extra: str) -> dict[str, Any]:
    out = store.parent / "out.json"
    result = invoke("run", "m1", "--base-url", server.base_url, "--profiles", store, "--json-file", out, *extra)
    assert result.exit_code in (0, 1), result.stderr
    data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    data["stdout"] = result.stdout
    return data


def test_a_cached_run_asks_nothing_and_scores_the_same(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    with LoopbackServer(perfect, models=["m1"]) as server:
        first = run(server, store, "--cache")
        asked = len(server.bodies)
        first_store = stored(store)
        second = run(server, store, "--cache")

    assert asked == 36
    assert len(server.bodies) == asked, "the cached run sent requests"
    assert "Cache: 0 answer(s) reused, 36 asked of the model" in first["stdout"]
    assert "Cache: 36 answer(s) reused, 0 asked of the model" in second["stdout"]
    assert second["levels"] == first["levels"]
    assert without_tested_at(stored(store)["profiles"]) == without_tested_at(first_store["profiles"])
    cached = rows(history_of(store), "SELECT cached, count(*) AS n FROM steps GROUP BY cached ORDER BY cached")
    assert [(r["cached"], r["n"]) for r in cached] == [(0, 36), (1, 36)]


def test_without_cache_or_with_no_cache_every_request_is_sent(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    with LoopbackServer(perfect, models=["m1"]) as server:
        run(server, store, "--cache", "-e", "none")
        run(server, store, "-e", "none")
        run(server, store, "--no-cache", "-e", "none")
        run(server, store, "--cache", "--no-cache", "-e", "none")

    assert len(server.bodies) == 4 * 9


def test_errors_are_never_cached(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    answers = {"m1": failing(500, "the model crashed")}
    with LoopbackServer(by_model(answers), models=["m1"]) as server:
        broken = run(server, store, "--cache", "-e", "none", "--retries", "0")
        assert rows(history_of(store), "SELECT count(*) FROM responses")[0][0] == 0
        answers["m1"] = perfect
        before = len(server.bodies)
        healed = run(server, store, "--cache", "-e", "none")

    assert broken["failed"]
    assert healed["failed"] == []
    assert len(server.bodies) - before == 9
    assert rows(history_of(store), "SELECT count(*) FROM responses")[0][0] == 9


def test_a_changed_setting_misses_the_cache(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    with LoopbackServer(perfect, models=["m1"]) as server:
        run(server, store, "--cache", "-e", "none")
        run(server, store, "--cache", "-e", "none", "--temperature", "0.5")
        run(server, store, "--cache", "-e", "low")
        run(server, store, "--cache", "-e", "none", "--temperature", "0.5")

    assert len(server.bodies) == 3 * 9


def _key(config: BackendConfig, request: ChatRequest) -> str:
    backend = OpenAIBackend(config, httpx.AsyncClient())
    return request_key(backend, request)


BASE = BackendConfig(base_url="http://127.0.0.1:9/v1")
REQUEST = ChatRequest("m1", ({"role": "user", "content": "hi"},), (), "low")


@pytest.mark.parametrize(
    ("config", "request_"),
    [
        (BackendConfig(base_url="http://127.0.0.1:10/v1"), REQUEST),
        (BackendConfig(base_url=BASE.base_url, temperature=0.2), REQUEST),
        (BackendConfig(base_url=BASE.base_url, seed=1), REQUEST),
        (BackendConfig(base_url=BASE.base_url, max_tokens=10), REQUEST),
        (BackendConfig(base_url=BASE.base_url, options={"top_k": "3"}), REQUEST),
        (BASE, ChatRequest("m2", REQUEST.messages, (), "low")),
        (BASE, ChatRequest("m1", REQUEST.messages, (), "medium")),
        (BASE, ChatRequest("m1", REQUEST.messages, (), None)),
        (BASE, ChatRequest("m1", ({"role": "user", "content": "hi!"},), (), "low")),
        (BASE, ChatRequest("m1", REQUEST.messages, ({"type": "function", "function": {"name": "f"}},), "low")),
    ],
)
def test_the_key_covers_everything_that_shapes_a_request(config: BackendConfig, request_: ChatRequest) -> None:
    assert _key(config, request_) != _key(BASE, REQUEST)


def test_the_key_ignores_what_does_not_shape_a_request() -> None:
    same = BackendConfig(base_url="http://user:secret@127.0.0.1:9/v1", api_key="sk-1", timeout=5, retries=0)
    assert _key(same, REQUEST) == _key(BASE, REQUEST)
    assert len(_key(BASE, REQUEST)) == 64
