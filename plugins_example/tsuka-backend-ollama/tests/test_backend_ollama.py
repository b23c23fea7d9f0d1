"""The Ollama backend against a real server on 127.0.0.1 that speaks Ollama's wire format."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx
import pytest
from ollama_loopback import OllamaReply, OllamaServer
from tsuka_backend_ollama import plugin
from tsuka_backend_ollama.backend import THINK, OllamaBackend, base_url_from, is_think_rejection

import tsuka_core
from tsuka_core import (
    Answer,
    BackendConfig,
    BackendError,
    ChatRequest,
    CheckType,
    EffortRejected,
    Outcome,
    RequestError,
    ServerFacts,
)
from tsuka_core.backends import http
from tsuka_core.engine.runner import run_test
from tsuka_core.judge.checks import NoParams
from tsuka_core.suite import model
from tsuka_core.suite.model import Check, Step
from tsuka_core.testing import registry_of

T = TypeVar("T")
USER: list[dict[str, Any]] = [{"role": "user", "content": "What is the weather in Rome?"}]
FUNCTION: dict[str, Any] = {
    "name": "get_weather",
    "description": "Weather of a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {**FUNCTION, "requiredTier": "small"},
    "requiredTier": "medium",
}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    monkeypatch.setattr(http, "BACKOFF_BASE", 0.0)


def with_backend(server: OllamaServer | str, use: Callable[[OllamaBackend], Awaitable[T]], **config: Any) -> T:
    """Run ``use`` with a backend pointed at ``server`` (or a URL), with the given config fields."""
    url = server if isinstance(server, str) else server.base_url

    async def run() -> T:
        async with httpx.AsyncClient(timeout=10) as client:
            backend = OllamaBackend(BackendConfig(base_url=url, retries=2, **config), client)
            return await use(backend)

    return asyncio.run(run())


def complete(server: OllamaServer, request: ChatRequest, **config: Any) -> tsuka_core.ChatResponse:
    return with_backend(server, lambda backend: backend.complete(request), **config)


# --- registration -----------------------------------------------------------------------------------------------------


def test_the_plugin_registers_the_ollama_backend() -> None:
    registry = registry_of(plugin, builtins=False)
    assert registry.backend("ollama") is OllamaBackend
    assert registry.registered_by(registry.plugins[0]) == ["backend ollama"]
    assert OllamaBackend.env_vars == ("OLLAMA_HOST",)
    assert OllamaBackend.applies_effort is True


# --- where the server is ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("configured", "host", "expected"),
    [
        (None, None, "http://127.0.0.1:11434"),
        (None, "0.0.0.0", "http://0.0.0.0:11434"),
        (None, "127.0.0.1:9999", "http://127.0.0.1:9999"),
        (None, "https://ollama.example", "https://ollama.example"),
        (None, "http://127.0.0.1:11434/", "http://127.0.0.1:11434"),
        ("http://127.0.0.1:8080/v1", "127.0.0.1:9999", "http://127.0.0.1:8080"),
        ("http://127.0.0.1:8080/api/", None, "http://127.0.0.1:8080"),
        ("http://127.0.0.1:8080/proxy/ollama", None, "http://127.0.0.1:8080/proxy/ollama"),
    ],
)
def test_the_base_url_comes_from_the_config_then_ollama_host(
    configured: str | None, host: str | None, expected: str
) -> None:
    assert base_url_from(configured, host) == expected


@pytest.mark.parametrize("bad", ["ftp://127.0.0.1", "http://", "http://127.0.0.1:notaport"])
def test_a_bad_base_url_is_a_one_line_backend_error(bad: str) -> None:
    with pytest.raises(BackendError, match="backend 'ollama'") as caught:
        base_url_from(bad, None)
    assert "\n" not in str(caught.value)


def test_ollama_host_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:12345")

    async def make() -> str:
        async with httpx.AsyncClient() as client:
            return OllamaBackend(BackendConfig(), client).provider

    assert asyncio.run(make()) == "http://127.0.0.1:12345"


@pytest.mark.parametrize(
    ("options", "message"),
    [({"num_gpu": "1"}, "does not know --option num_gpu"), ({"num_ctx": "lots"}, "num_ctx=lots must be a whole")],
)
def test_unknown_or_bad_options_are_refused(options: dict[str, str], message: str) -> None:
    async def make() -> None:
        async with httpx.AsyncClient() as client:
            OllamaBackend(BackendConfig(options=options), client)

    with pytest.raises(BackendError, match=message):
        asyncio.run(make())


# --- list_models ------------------------------------------------------------------------------------------------------


def test_list_models_reads_api_tags() -> None:
    with OllamaServer(models=["qwen3:8b", "llama3.2:latest"]) as server:
        names = with_backend(server, lambda backend: backend.list_models())
    assert names == ["qwen3:8b", "llama3.2:latest"]
    assert [(m, p) for m, p, _ in server.requests] == [("GET", "/api/tags")]


def test_a_server_that_is_not_ollama_gets_a_hint() -> None:
    with OllamaServer() as server, pytest.raises(RequestError, match="is this an Ollama server"):
        with_backend(server.base_url + "/v2", lambda backend: backend.list_models())


# --- the request ------------------------------------------------------------------------------------------------------


def test_the_request_is_ollamas_native_chat_body() -> None:
    with OllamaServer() as server:
        complete(
            server,
            ChatRequest("m1", USER, (WEATHER,), "medium"),
            temperature=0.2,
            seed=7,
            max_tokens=512,
            options={"num_ctx": "8192", "keep_alive": "10m"},
        )
    (body,) = server.chats
    assert body["model"] == "m1"
    assert body["stream"] is False
    assert body["messages"] == USER
    assert body["options"] == {"num_predict": 512, "temperature": 0.2, "seed": 7, "num_ctx": 8192}
    assert body["think"] == "medium"
    assert body["keep_alive"] == "10m"
    assert body["tools"] == [{"type": "function", "function": FUNCTION}]


def test_sampling_is_left_to_the_model_unless_configured() -> None:
    with OllamaServer() as server:
        complete(server, ChatRequest("m1", USER))
    (body,) = server.chats
    assert body["options"] == {"num_predict": 8192}
    assert "think" not in body
    assert "tools" not in body
    assert "keep_alive" not in body


@pytest.mark.parametrize(
    ("effort", "think"), [("none", False), ("low", "low"), ("medium", "medium"), ("xhigh", "high")]
)
def test_each_effort_is_sent_as_think(effort: tsuka_core.Effort, think: bool | str) -> None:
    assert THINK[effort] == think
    with OllamaServer() as server:
        complete(server, ChatRequest("m1", USER, (), effort))
    assert server.chats[0]["think"] == think


def test_a_tool_round_trip_is_sent_in_ollamas_shape() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Be brief."},
        *USER,
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "never sent back",
            "tool_calls": [
                {
                    "id": "call_0",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_0", "content": "Sunny, 24 C"},
    ]
    with OllamaServer() as server:
        complete(server, ChatRequest("m1", messages, (WEATHER,)))
    assert server.chats[0]["messages"] == [
        {"role": "system", "content": "Be brief."},
        *USER,
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Rome"}}}],
        },
        {"role": "tool", "content": "Sunny, 24 C", "tool_name": "get_weather"},
    ]


# --- the answer -------------------------------------------------------------------------------------------------------


def test_thinking_is_reasoning_and_counts_are_usage() -> None:
    reply = OllamaReply.text("<think>hidden</think> Paris.", thinking="The capital...", eval_count=40)
    with OllamaServer(lambda body, n: reply) as server:
        response = complete(server, ChatRequest("m1", USER, (), "low"))
    assert response.text == "Paris."
    assert response.content == "<think>hidden</think> Paris."
    assert response.reasoning == "The capital..."
    assert (response.prompt_tokens, response.completion_tokens, response.usage_estimated) == (12, 40, False)
    assert response.duration > 0


def test_without_counts_the_completion_tokens_are_estimated() -> None:
    with OllamaServer(lambda body, n: OllamaReply.text("x" * 70, eval_count=None)) as server:
        response = complete(server, ChatRequest("m1", USER))
    assert (response.completion_tokens, response.usage_estimated, response.prompt_tokens) == (20, True, None)


@pytest.mark.parametrize("count", [2**64, 10**400])
def test_an_absurd_count_is_estimated(count: int) -> None:
    reply = OllamaReply.text("x" * 70, eval_count=count, eval_duration=500_000_000)
    with OllamaServer(lambda body, n: reply) as server:
        response = complete(server, ChatRequest("m1", USER))
    assert (response.completion_tokens, response.usage_estimated) == (20, True)


def test_tool_calls_with_object_arguments_get_ids() -> None:
    reply = OllamaReply(tool_calls=(("get_weather", {"city": "Rome"}), ("get_weather", {"city": "Oslo"})))
    with OllamaServer(lambda body, n: reply) as server:
        response = complete(server, ChatRequest("m1", USER, (WEATHER,)))
    assert [(c.id, c.name, c.arguments, c.arguments_problem) for c in response.tool_calls] == [
        ("call_0", "get_weather", {"city": "Rome"}, None),
        ("call_1", "get_weather", {"city": "Oslo"}, None),
    ]
    assert response.text == ""


def test_tool_call_ids_the_server_sends_are_kept() -> None:
    reply = OllamaReply(tool_calls=(("get_weather", {"city": "Rome"}),), call_ids=True)
    with OllamaServer(lambda body, n: reply) as server:
        response = complete(server, ChatRequest("m1", USER, (WEATHER,)))
    assert [c.id for c in response.tool_calls] == ["call_srv0"]


@pytest.mark.parametrize(
    "raw",
    [b"{}", b'{"message": "not an object"}', b'{"error": "model runner crashed"}', b"[]"],
)
def test_a_malformed_answer_is_a_request_error(raw: bytes) -> None:
    with OllamaServer(lambda body, n: OllamaReply(raw=raw)) as server, pytest.raises(RequestError, match="/api/chat"):
        complete(server, ChatRequest("m1", USER))


def test_decode_speed_comes_from_the_servers_own_timing() -> None:
    reply = OllamaReply.text("ok", eval_count=50, eval_duration=500_000_000)

    async def two(backend: OllamaBackend) -> tuple[float | None, float | None]:
        await backend.complete(ChatRequest("m1", USER, (), "low"))
        await backend.complete(ChatRequest("m1", USER, (), "low"))
        return backend.decode_speed("m1", "low"), backend.decode_speed("m1", "xhigh")

    with OllamaServer(lambda body, n: reply) as server:
        assert with_backend(server, two) == (100.0, None)


def test_the_servers_own_timings_are_the_answers_speed() -> None:
    reply = OllamaReply.text("ok", eval_count=50, eval_duration=500_000_000)
    with OllamaServer(lambda body, n: reply) as server:
        response = complete(server, ChatRequest("m1", USER))

    assert response.speed_source == "server"
    assert (response.generation_ms, response.generated_tokens) == (500.0, 50)
    assert (response.prompt_ms, response.prompt_processed, response.first_token_ms) == (40.0, 12, 40.0)
    assert response.finish_reason == "stop"


def test_without_counts_the_speed_is_the_wall_time() -> None:
    with OllamaServer(lambda body, n: OllamaReply.text("ok", eval_count=None)) as server:
        response = complete(server, ChatRequest("m1", USER))

    assert (response.speed_source, response.generation_ms, response.prompt_ms) == ("wall", None, None)


def test_server_facts_come_from_version_tags_and_show() -> None:
    async def facts(backend: OllamaBackend) -> tuple[ServerFacts, ServerFacts]:
        return await backend.server_facts("m1"), await backend.server_facts("m2")

    with OllamaServer(models=["m1", "m2"]) as server:
        with_tools, without = with_backend(server, facts)

    assert with_tools == ServerFacts(kind="ollama", version="0.12.3", model_file="sha256-m1", supports_tools=True)
    assert without.supports_tools is False
    assert without.model_file == "sha256-m2"


def test_server_facts_of_a_server_that_answers_none_of_it_are_only_its_kind() -> None:
    async def facts(backend: OllamaBackend) -> ServerFacts:
        return await backend.server_facts("m1")

    with OllamaServer() as server:
        gone = server.base_url
    assert with_backend(gone, facts) == ServerFacts(kind="ollama")


# --- failures ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        '"llama3.2:latest" does not support thinking',
        'invalid think value: "xhigh" (must be "high", "medium", "low", true, or false)',
        'think value "low" is not supported for this model',
    ],
)
def test_a_refused_think_value_is_effort_rejected(message: str) -> None:
    with (
        OllamaServer(lambda body, n: OllamaReply.failure(400, message)) as server,
        pytest.raises(EffortRejected, match="refused think='low'"),
    ):
        complete(server, ChatRequest("m1", USER, (), "low"))
    assert len(server.chats) == 1, "a refusal is not retried"


def test_the_same_refusal_without_effort_is_an_ordinary_request_error() -> None:
    with (
        OllamaServer(lambda body, n: OllamaReply.failure(400, '"m1" does not support thinking')) as server,
        pytest.raises(RequestError) as caught,
    ):
        complete(server, ChatRequest("m1", USER))
    assert not isinstance(caught.value, EffortRejected)


@pytest.mark.parametrize(
    ("status", "message", "rejected"),
    [
        (400, '"m" does not support thinking', True),
        (400, "invalid think value: true", True),
        (400, '"m" does not support tools', False),
        (404, 'model "m" not found, try pulling it first', False),
        (500, "does not support thinking", False),
    ],
)
def test_only_a_400_about_think_is_a_rejection(status: int, message: str, rejected: bool) -> None:
    assert is_think_rejection(status, message) is rejected


def test_credentials_a_server_echoes_back_are_masked() -> None:
    password = "pa55-w0rd-x"
    with OllamaServer(lambda body, n: OllamaReply.failure(400, f"bad login user:{password}")) as server:
        url = server.base_url.replace("http://", f"http://user:{password}@")
        with pytest.raises(RequestError) as caught:
            with_backend(url, lambda backend: backend.complete(ChatRequest("m1", USER)))
    assert password not in str(caught.value)
    assert "bad login user:***" in str(caught.value)


def test_a_missing_model_is_a_request_error_with_the_servers_words() -> None:
    with (
        OllamaServer(
            lambda body, n: OllamaReply.failure(404, 'model "nope" not found, try pulling it first')
        ) as server,
        pytest.raises(RequestError, match='model "nope" not found') as caught,
    ):
        complete(server, ChatRequest("nope", USER, (), "none"))
    assert not isinstance(caught.value, EffortRejected)


def test_a_busy_server_is_retried() -> None:
    answers = [OllamaReply.failure(503, "server busy"), OllamaReply.text("ok")]
    with OllamaServer(lambda body, n: answers[min(n, 1)]) as server:
        response = complete(server, ChatRequest("m1", USER))
    assert response.text == "ok"
    assert len(server.chats) == 2


def test_a_server_that_keeps_failing_gives_up_after_the_retries() -> None:
    with (
        OllamaServer(lambda body, n: OllamaReply.failure(500, "boom")) as server,
        pytest.raises(RequestError, match="gave up after 3 attempts"),
    ):
        complete(server, ChatRequest("m1", USER))
    assert len(server.chats) == 3


# --- with the engine --------------------------------------------------------------------------------------------------


class Anything(CheckType[NoParams]):
    """Pass always (the engine's part is tested here, not the checks)."""

    name = "anything"

    def evaluate(self, answer: Answer) -> Outcome:
        return Outcome.ok(json.dumps([c.name for c in answer.tool_calls]))


def _step(prompt: str | None, tool_result: str | None) -> Step:
    check = Check("anything", 1, NoParams(), Anything(NoParams()), "checks[0]")
    return Step(prompt, tool_result, (check,))


def test_a_two_step_test_runs_through_the_engine() -> None:
    test = model.Test(
        "30_weather.json",
        "weather",
        "toolCalling",
        (_step("Weather in Rome?", None), _step(None, "Sunny, 24 C")),
        tools=(WEATHER,),
    )
    replies = [OllamaReply.tool_call("get_weather", {"city": "Rome"}), OllamaReply.text("Sunny in Rome.")]
    with OllamaServer(lambda body, n: replies[n]) as server:
        result = with_backend(server, lambda backend: run_test(backend, test, "m1", "none"))
    assert result.status == "ok"
    assert result.score == 1
    second = server.chats[1]["messages"]
    assert second[1] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Rome"}}}],
    }
    assert second[2] == {"role": "tool", "content": "Sunny, 24 C", "tool_name": "get_weather"}
    assert all(body["think"] is False for body in server.chats)
