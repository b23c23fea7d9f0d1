"""The Ollama backend on the client the engine gives it: through the proxy of HTTP_PROXY, or straight past NO_PROXY."""

from __future__ import annotations

import asyncio

import pytest
from ollama_loopback import OllamaServer
from recording_proxy import RecordingProxy
from tsuka_backend_ollama.backend import OllamaBackend

from tsuka_core import BackendConfig, ChatRequest
from tsuka_core.run.session import make_client

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def _no_proxy_from_outside(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.delenv("OLLAMA_HOST", raising=False)


def list_and_chat(base_url: str) -> tuple[list[str], str]:
    """List the models and ask one question, as ``tsuka run`` does, on the engine's client."""

    async def run() -> tuple[list[str], str]:
        async with make_client(2, 10.0) as client:
            backend = OllamaBackend(BackendConfig(base_url=base_url, retries=0), client)
            names = await backend.list_models()
            reply = await backend.complete(ChatRequest("m1", [{"role": "user", "content": "Hello?"}]))
            return names, reply.text

    return asyncio.run(run())


def test_every_request_goes_through_the_proxy_of_http_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    with OllamaServer() as server, RecordingProxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        root = server.base_url
        assert list_and_chat(root) == (["m1"], "ok")
    assert proxy.seen == [f"GET {root}/api/tags", f"POST {root}/api/chat"]
    assert proxy.refused == []
    assert [(method, path) for method, path, _ in server.requests] == [("GET", "/api/tags"), ("POST", "/api/chat")]


def test_no_proxy_naming_the_server_sends_straight_to_it(monkeypatch: pytest.MonkeyPatch) -> None:
    with OllamaServer() as server, RecordingProxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        assert list_and_chat(server.base_url) == (["m1"], "ok")
    assert proxy.seen == []
    assert len(server.requests) == 2
