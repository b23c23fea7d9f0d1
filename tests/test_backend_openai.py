"""The OpenAI-compatible backend and the shared HTTP helpers, against a mock transport and a real loopback server."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx
import pytest
from loopback import LoopbackServer, Reply

from tsuka_core.backends import http
from tsuka_core.backends.base import BackendConfig, ChatRequest, ChatResponse, EffortRejected
from tsuka_core.backends.http import StatusError, request_json, retry_after_seconds, server_message
from tsuka_core.backends.openai import OpenAIBackend, outgoing_message
from tsuka_core.errors import BackendError, RequestError
from tsuka_core.terms import EFFORTS
from tsuka_core.urls import redact_url

T = TypeVar("T")
MOCK_URL = "http://mock.test/v1"
USER = [{"role": "user", "content": "Hi"}]
TOOL = {
    "type": "function",
    "function": {"name": "find_user", "description": "Find a user", "parameters": {"type": "object"}},
    "requiredTier": "medium",
}


pytestmark = pytest.mark.usefixtures("fast_retries")


def completion(content: Any = "ok", **message: Any) -> dict[str, Any]:
    """A chat-completion body with usage, whose message has ``content`` and any other fields given."""
    return {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content, **message}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3},
    }


class Mock:
    """A MockTransport handler answering from a script (repeating the last entry) and recording each request."""

    def __init__(self, *script: httpx.Response | dict[str, Any] | Exception) -> None:
        self.script = list(script) or [completion()]
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = self.script[min(len(self.requests), len(self.script)) - 1]
        if isinstance(step, Exception):
            raise step
        return step if isinstance(step, httpx.Response) else httpx.Response(200, json=step)

    @property
    def bodies(self) -> list[Any]:
        return [json.loads(r.content) if r.content else None for r in self.requests]


def run(
    action: Callable[[OpenAIBackend], Awaitable[T]],
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    base_url: str | None = MOCK_URL,
    **config: Any,
) -> T:
    """Build a backend on a fresh client and run ``action`` with it."""

    async def main() -> T:
        async with httpx.AsyncClient(transport=transport) as client:
            return await action(OpenAIBackend(BackendConfig(base_url=base_url, **config), client))

    return asyncio.run(main())


def complete(mock: Mock, request: ChatRequest | None = None, **config: Any) -> ChatResponse:
    """One completion through ``mock``."""
    chat = request or ChatRequest(model="m1", messages=USER)
    return run(lambda b: b.complete(chat), transport=httpx.MockTransport(mock), **config)


def complete_live(server: LoopbackServer, request: ChatRequest | None = None, **config: Any) -> ChatResponse:
    """One completion through the loopback server."""
    chat = request or ChatRequest(model="m1", messages=USER)
    return run(lambda b: b.complete(chat), base_url=server.base_url, **config)


def offline(**config: Any) -> OpenAIBackend:
    """A backend that is never used to send anything (the constructor does no I/O)."""
    return OpenAIBackend(BackendConfig(**config), httpx.AsyncClient())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- request shape ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("effort", EFFORTS)
def test_effort_is_sent_verbatim_as_reasoning_effort(effort: Any) -> None:
    mock = Mock()
    complete(mock, ChatRequest(model="m1", messages=USER, effort=effort))
    assert mock.bodies[0]["reasoning_effort"] == effort


def test_no_effort_sends_no_reasoning_effort() -> None:
    mock = Mock()
    complete(mock)
    assert "reasoning_effort" not in mock.bodies[0]


def test_plain_request_has_model_messages_max_tokens_and_nothing_unset() -> None:
    mock = Mock()
    complete(mock, max_tokens=321)
    assert mock.requests[0].method == "POST"
    assert str(mock.requests[0].url) == f"{MOCK_URL}/chat/completions"
    streamed = {"stream": True, "stream_options": {"include_usage": True}}
    assert mock.bodies[0] == {"model": "m1", "messages": USER, "max_tokens": 321, **streamed}


def test_stream_off_sends_no_stream_fields() -> None:
    mock = Mock()
    complete(mock, max_tokens=321, options={"stream": "off"})
    assert mock.bodies[0] == {"model": "m1", "messages": USER, "max_tokens": 321}


def test_tools_come_with_tool_choice_auto_and_without_required_tier() -> None:
    mock = Mock()
    complete(mock, ChatRequest(model="m1", messages=USER, tools=[TOOL]))
    body = mock.bodies[0]
    assert body["tool_choice"] == "auto"
    assert body["tools"] == [{"type": "function", "function": TOOL["function"]}]


def test_temperature_and_seed_are_sent_only_when_set() -> None:
    mock = Mock()
    complete(mock, temperature=0.0, seed=7)
    assert (mock.bodies[0]["temperature"], mock.bodies[0]["seed"]) == (0.0, 7)


def test_history_is_normalised_for_the_server() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "find_user", "arguments": {"name": "Maria Rossi"}}}
    assistant = {"role": "assistant", "content": None, "tool_calls": [call], "reasoning_content": "hmm"}
    tool = {"role": "tool", "tool_call_id": "c1", "content": "found"}
    mock = Mock()
    complete(mock, ChatRequest(model="m1", messages=[*USER, assistant, tool]))
    sent = mock.bodies[0]["messages"][1]
    assert sent["content"] == ""
    assert sent["tool_calls"][0]["function"]["arguments"] == '{"name": "Maria Rossi"}'
    assert "reasoning_content" not in sent
    assert mock.bodies[0]["messages"][2] == tool
    assert assistant["content"] is None, "the caller's message must not be changed"


def test_string_arguments_and_user_content_are_left_alone() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}
    assert outgoing_message({"role": "assistant", "content": "x", "tool_calls": [call]})["tool_calls"] == [call]
    assert outgoing_message({"role": "user", "content": None}) == {"role": "user", "content": None}


# --- response normalisation ------------------------------------------------------------------------------------


def test_think_blocks_are_stripped_from_text_but_kept_in_content() -> None:
    raw = "<think>2+2, carry nothing</think>\n  Four  "
    answer = complete(Mock(completion(raw)))
    assert answer.text == "Four"
    assert answer.content == raw


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_fields_are_kept_apart_from_text(field: str) -> None:
    answer = complete(Mock(completion("Paris", **{field: "The capital is Paris"})))
    assert (answer.text, answer.reasoning) == ("Paris", "The capital is Paris")


def test_list_content_joins_text_parts() -> None:
    parts = [
        {"type": "text", "text": "Hello "},
        {"type": "image_url", "image_url": {}},
        {"type": "text", "text": "you"},
    ]
    assert complete(Mock(completion(parts))).text == "Hello you"


def test_null_content_gives_empty_text() -> None:
    answer = complete(Mock(completion(None)))
    assert (answer.text, answer.content) == ("", None)


def test_object_arguments_are_accepted() -> None:
    call = {"id": "x", "type": "function", "function": {"name": "find_user", "arguments": {"name": "Maria Rossi"}}}
    answer = complete(Mock(completion(None, tool_calls=[call])))
    assert [(c.id, c.name, c.arguments) for c in answer.tool_calls] == [("x", "find_user", {"name": "Maria Rossi"})]


def test_invalid_json_arguments_are_repaired() -> None:
    call = {"type": "function", "function": {"name": "find_user", "arguments": '{"name": "Maria Rossi"'}}
    answer = complete(Mock(completion(None, tool_calls=[call])))
    assert answer.tool_calls[0].arguments == {"name": "Maria Rossi"}
    assert answer.tool_calls[0].arguments_problem is None
    assert answer.tool_calls[0].id == "call_0"


def test_usage_is_taken_from_the_server() -> None:
    answer = complete(Mock(completion("ok")))
    assert (answer.prompt_tokens, answer.completion_tokens, answer.usage_estimated) == (5, 3, False)


def test_missing_usage_is_estimated_and_flagged() -> None:
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    body = completion("x" * 32, tool_calls=[call])
    del body["usage"]
    answer = complete(Mock(body))
    assert answer.usage_estimated is True
    assert answer.completion_tokens == round(len("x" * 32 + "f{}") / 3.5) == 10
    assert answer.prompt_tokens is None


@pytest.mark.parametrize("body", [{}, {"choices": []}, {"choices": [{"index": 0}]}, [1, 2]])
def test_a_completion_without_choices_is_a_request_error(body: Any) -> None:
    mock = Mock(httpx.Response(200, json=body))
    with pytest.raises(RequestError, match="malformed completion") as caught:
        complete(mock)
    assert len(mock.requests) == 1
    assert caught.value.retryable is False


# --- errors and retries ----------------------------------------------------------------------------------------


def test_bad_request_fails_at_once_with_the_server_message() -> None:
    mock = Mock(httpx.Response(400, json={"error": {"message": "model 'm1' not found\n  try another"}}))
    with pytest.raises(StatusError) as caught:
        complete(mock)
    assert len(mock.requests) == 1
    assert str(caught.value) == f"POST {MOCK_URL}/chat/completions: HTTP 400: model 'm1' not found try another"
    assert (caught.value.status, caught.value.retryable) == (400, False)


def test_server_errors_are_tried_retries_plus_one_times() -> None:
    mock = Mock(httpx.Response(500, text="engine on fire"))
    with pytest.raises(RequestError) as caught:
        complete(mock, retries=2)
    assert len(mock.requests) == 3
    assert "HTTP 500: engine on fire (gave up after 3 attempts)" in str(caught.value)
    assert (caught.value.status, caught.value.retryable) == (500, True)


def test_read_timeout_is_retried_then_succeeds() -> None:
    mock = Mock(httpx.ReadTimeout("slow"), completion("late"))
    assert complete(mock).text == "late"
    assert len(mock.requests) == 2


def test_retry_after_is_honoured_in_seconds_and_as_a_date_capped() -> None:
    date = "Wed, 21 Oct 2015 07:28:30 GMT"
    now = datetime(2015, 10, 21, 7, 28, 0, tzinfo=UTC)
    assert retry_after_seconds("2") == 2.0
    assert retry_after_seconds(date, now=now) == 30.0
    assert retry_after_seconds("86400") == http.RETRY_AFTER_CAP
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds("-5") == 0.0


def test_request_json_waits_what_retry_after_asks() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    mock = Mock(httpx.Response(429, headers={"Retry-After": "7"}), httpx.Response(503), {"ok": True})

    async def main() -> http.JsonReply:
        async with httpx.AsyncClient(transport=httpx.MockTransport(mock)) as client:
            return await request_json(client, "GET", "http://mock.test/x", sleep=sleep, backoff_base=1000.0)

    reply = asyncio.run(main())
    assert (reply.data, reply.attempts) == ({"ok": True}, 3)
    assert waits[0] == 7.0
    assert 0.0 <= waits[1] <= http.BACKOFF_CAP


def test_connection_refused_is_retried_then_fails_naming_it() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(RequestError, match=r"cannot connect .*\(gave up after 3 attempts\)") as caught:
        run(lambda b: b.complete(ChatRequest(model="m1", messages=USER)), base_url=url, retries=2)
    assert caught.value.retryable is True


def test_not_found_hints_at_the_base_url() -> None:
    with pytest.raises(StatusError, match="ends in /v1"):
        complete(Mock(httpx.Response(404, text="Not Found")))


# --- effort rejection ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "response",
    [
        httpx.Response(400, json={"error": {"message": "Unrecognized request argument supplied: reasoning_effort"}}),
        httpx.Response(400, json={"error": {"message": "reasoning is not supported for this model"}}),
        httpx.Response(422, json={"detail": [{"loc": ["body", "reasoning_effort"], "msg": "Input should be 'low'"}]}),
    ],
)
def test_effort_refused_by_the_server_raises_effort_rejected_without_resending(response: httpx.Response) -> None:
    mock = Mock(response)
    with pytest.raises(EffortRejected) as caught:
        complete(mock, ChatRequest(model="m1", messages=USER, effort="xhigh"))
    assert len(mock.requests) == 1
    assert caught.value.status == response.status_code
    assert "'xhigh'" in str(caught.value)


def test_other_bad_requests_are_not_effort_rejections() -> None:
    refusal = httpx.Response(400, json={"error": {"message": "context length exceeded"}})
    with pytest.raises(RequestError) as caught:
        complete(Mock(refusal), ChatRequest(model="m1", messages=USER, effort="low"))
    assert not isinstance(caught.value, EffortRejected)
    effortless = httpx.Response(400, json={"error": {"message": "unknown field reasoning_effort"}})
    with pytest.raises(RequestError) as caught:
        complete(Mock(effortless))
    assert not isinstance(caught.value, EffortRejected)


# --- models, configuration, credentials ------------------------------------------------------------------------


def test_list_models_in_server_order() -> None:
    data = {"object": "list", "data": [{"id": "zeta"}, {"id": "alpha"}, {"object": "model"}]}
    mock = Mock(data)
    assert run(lambda b: b.list_models(), transport=httpx.MockTransport(mock)) == ["zeta", "alpha"]
    assert (mock.requests[0].method, str(mock.requests[0].url)) == ("GET", f"{MOCK_URL}/models")


def test_list_models_rejects_an_unexpected_shape() -> None:
    with pytest.raises(RequestError, match="no 'data' list"):
        run(lambda b: b.list_models(), transport=httpx.MockTransport(Mock({"models": []})))


def test_missing_base_url_says_how_to_set_it() -> None:
    with pytest.raises(BackendError) as caught:
        offline()
    assert str(caught.value) == "backend 'openai' needs a base URL: pass --base-url or set OPENAI_BASE_URL"


def test_base_url_and_key_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env.test:9/v1/")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    backend = offline()
    assert (backend.provider, backend.api_key) == ("http://env.test:9/v1", "sk-env")


def test_a_base_url_without_scheme_is_refused() -> None:
    with pytest.raises(BackendError, match="http:// or https://"):
        offline(base_url="localhost:8080/v1")


def test_api_key_is_sent_as_bearer_and_hidden_from_provider_and_errors() -> None:
    echo = httpx.Response(401, json={"error": {"message": "Incorrect API key provided: sk-secret-123"}})
    mock = Mock(echo)
    base = "http://mock.test/v1/?api_key=sk-secret-123&v=2"
    with pytest.raises(StatusError) as caught:
        complete(mock, base_url=base, api_key="sk-secret-123")
    assert mock.requests[0].headers["authorization"] == "Bearer sk-secret-123"
    assert "sk-secret-123" not in str(caught.value)
    assert "sk-secret-123" not in caught.value.server_message
    assert "Incorrect API key provided: ***" in str(caught.value)
    assert "sk-secret-123" not in offline(base_url=base).provider


def test_provider_is_the_base_url_without_credentials() -> None:
    base = "http://user:pw@mock.test/v1/?api_key=sk-1&v=2"
    assert offline(base_url=base).provider == "http://mock.test/v1/?api_key=***&v=***"
    assert offline(base_url="http://h.test/v1//").provider == "http://h.test/v1"


def test_no_key_sends_no_authorization() -> None:
    mock = Mock()
    complete(mock)
    assert "authorization" not in mock.requests[0].headers


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://u:p@h.test:8/v1", "http://h.test:8/v1"),
        ("https://h.test/v1?key=a&api_key=b&TOKEN=c&x=1", "https://h.test/v1?key=***&api_key=***&TOKEN=***&x=***"),
        ("http://h.test/v1", "http://h.test/v1"),
        ("http://[::1]:8/v1?token=t", "http://[::1]:8/v1?token=***"),
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


# --- bodies ----------------------------------------------------------------------------------------------------


def fetch(response: httpx.Response, **kw: Any) -> Any:
    async def main() -> Any:
        async with httpx.AsyncClient(transport=httpx.MockTransport(Mock(response))) as client:
            return (await request_json(client, "GET", "http://mock.test/x", **kw)).data

    return asyncio.run(main())


def test_a_body_that_is_not_json_is_a_request_error() -> None:
    with pytest.raises(RequestError, match=r"GET http://mock.test/x: the response is not JSON \(it starts '<html>"):
        fetch(httpx.Response(200, text="<html>proxy login</html>"))


def test_an_empty_body_is_a_request_error() -> None:
    with pytest.raises(RequestError, match="empty"):
        fetch(httpx.Response(200, content=b""))


def test_a_body_over_the_limit_is_refused_declared_or_not() -> None:
    with pytest.raises(RequestError, match="larger than 100 bytes"):
        fetch(httpx.Response(200, json={"pad": "x" * 200}), max_bytes=100)

    async def chunks() -> AsyncIterator[bytes]:
        for chunk in [b'{"pad": "', b"x" * 80, b"x" * 80, b'"}']:
            yield chunk

    with pytest.raises(RequestError, match="larger than 100 bytes"):
        fetch(httpx.Response(200, content=chunks()), max_bytes=100)


def test_invalid_utf8_is_decoded_with_replacement() -> None:
    assert fetch(httpx.Response(200, content=b'{"a": "caf\xe9"}')) == {"a": "caf\ufffd"}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"error": {"message": "bad  model\\nname"}}', "bad model name"),
        (b'{"error": "quota"}', "quota"),
        (b'{"object": "error", "message": "vllm says no"}', "vllm says no"),
        (b'{"detail": [{"loc": ["body", "x"], "msg": "required"}]}', "body.x: required"),
        (b"<html><title>502 Bad Gateway</title></html>", "502 Bad Gateway"),
        (b"", "fallback"),
        (b"plain " * 100, ("plain " * 100)[:299].strip() + "…"),
    ],
)
def test_server_message(raw: bytes, message: str) -> None:
    assert server_message(raw, "fallback") == message


# --- a real socket ---------------------------------------------------------------------------------------------


def test_loopback_round_trip_with_tools_effort_and_key() -> None:
    with LoopbackServer(lambda body, n: Reply.tool_call("find_user", {"name": "Maria Rossi"})) as server:
        request = ChatRequest(model="m1", messages=USER, tools=[TOOL], effort="none")
        answer = complete_live(server, request, api_key="sk-live")
    call = answer.tool_calls[0]
    assert (call.name, call.arguments) == ("find_user", {"name": "Maria Rossi"})
    assert (answer.completion_tokens, answer.usage_estimated) == (7, False)
    (received,) = server.requests
    assert (received.method, received.path) == ("POST", "/v1/chat/completions")
    assert received.headers["authorization"] == "Bearer sk-live"
    assert received.body["reasoning_effort"] == "none"
    assert received.body["tool_choice"] == "auto"


def test_loopback_object_arguments_reasoning_and_missing_usage() -> None:
    reply = Reply(content="<think>x</think>Done", tool_calls=(("f", {"a": 1}),), object_arguments=True, usage=None)
    with LoopbackServer(lambda body, n: reply) as server:
        answer = complete_live(server)
    assert (answer.text, answer.tool_calls[0].arguments, answer.usage_estimated) == ("Done", {"a": 1}, True)


def test_loopback_429_with_retry_after_then_success() -> None:
    def handler(body: dict[str, Any], n: int) -> Reply:
        return Reply.error(429, "slow down", retry_after=0) if n == 0 else Reply.text("fine")

    with LoopbackServer(handler) as server:
        assert complete_live(server).text == "fine"
    assert len(server.bodies) == 2


def test_loopback_500_gives_up_after_retries_plus_one() -> None:
    server = LoopbackServer(lambda body, n: Reply.error(500, "boom"))
    with server, pytest.raises(RequestError, match="HTTP 500: boom"):
        complete_live(server, retries=3)
    assert len(server.bodies) == 4


def test_loopback_timeout_and_dropped_connection_are_retried() -> None:
    script = [Reply.error(500, "late", delay=60.0), Reply.drop(), Reply.text("third time")]
    with LoopbackServer(lambda body, n: script[n]) as server:
        started = time.perf_counter()
        answer = complete_live(server, timeout=0.3)
        elapsed = time.perf_counter() - started
    assert answer.text == "third time"
    assert len(server.bodies) == 3
    assert 0.3 <= elapsed < 30, "the late answer was not waited for"  # a margin any loaded machine keeps
    assert answer.duration < elapsed - 0.3, "duration counts the successful attempt only"


def test_loopback_duration_is_the_wall_time_of_the_request() -> None:
    with LoopbackServer(lambda body, n: Reply(content="slow", delay=0.2)) as server:
        answer = complete_live(server)
    assert 0.2 <= answer.duration < 20


def test_loopback_list_models() -> None:
    with LoopbackServer(models=["qwen3:8b", "gemma3:4b"]) as server:
        assert run(lambda b: b.list_models(), base_url=server.base_url) == ["qwen3:8b", "gemma3:4b"]


def test_loopback_serves_many_requests_at_once() -> None:
    def handler(body: dict[str, Any], n: int) -> Reply:
        return Reply(content=body["messages"][0]["content"], delay=1.0)

    async def many(backend: OpenAIBackend) -> list[str]:
        requests = [ChatRequest(model="m1", messages=[{"role": "user", "content": f"#{i}"}]) for i in range(40)]
        answers = await asyncio.gather(*(backend.complete(r) for r in requests))
        return [a.text for a in answers]

    with LoopbackServer(handler) as server:
        started = time.perf_counter()
        texts = run(many, base_url=server.base_url)
        elapsed = time.perf_counter() - started
    assert texts == [f"#{i}" for i in range(40)]
    assert elapsed < 20, "requests must be served concurrently"  # one at a time would take 40 s


def test_loopback_is_bounded_and_reports_handler_errors() -> None:
    def handler(body: dict[str, Any], n: int) -> Reply:
        raise ValueError("scripted bug")

    server = LoopbackServer(handler, max_requests=2)
    with server, pytest.raises(RequestError, match="HTTP 503: loopback: more than 2 requests"):
        complete_live(server, retries=5)
    assert len(server.requests) == 6, "503 is retried like any 5xx"
    assert [str(e) for e in server.errors] == ["scripted bug", "scripted bug"]


# --- servers that accept efforts and ignore them ----------------------------------------------------------------------


def props(supports: Any) -> httpx.Response:
    """llama.cpp's ``GET /props`` answer, reduced to what the backend reads."""
    caps = {"supports_reasoning_effort": supports, "supports_tools": True}
    return httpx.Response(200, json={"chat_template_caps": caps})


@pytest.mark.parametrize(
    ("answer", "ignored", "asked"),
    [
        (props(False), True, 1),
        (props(True), False, 1),
        (props(None), False, 1),
        (httpx.Response(404, json={"error": {"message": "Not Found"}}), False, 1),
        (httpx.Response(200, json=["not", "an", "object"]), False, 1),
        (httpx.Response(200, text="<html>not JSON</html>"), False, 1),
        (httpx.Response(503, json={"error": {"message": "Loading model"}}), False, 3),  # retried at most twice
        (httpx.ConnectError("refused"), False, 3),
    ],
    ids=["false", "true", "null", "404", "array", "html", "503", "refused"],
)
def test_only_a_props_saying_false_marks_efforts_as_ignored(
    answer: httpx.Response | Exception, ignored: bool, asked: int
) -> None:
    mock = Mock(answer)

    reason = run(lambda b: b.effort_ignored("m1"), transport=httpx.MockTransport(mock), retries=3)

    assert (reason is not None) == ignored
    assert [str(r.url) for r in mock.requests] == ["http://mock.test/props"] * asked
    if reason is not None:
        assert "supports_reasoning_effort is false" in reason


def test_a_server_still_loading_is_asked_again_and_then_read() -> None:
    mock = Mock(httpx.Response(503, json={"error": {"message": "Loading model"}}), props(False))

    reason = run(lambda b: b.effort_ignored("m1"), transport=httpx.MockTransport(mock), retries=3)

    assert reason is not None
    assert len(mock.requests) == 2


@pytest.mark.parametrize(
    ("base_url", "asked"),
    [
        ("http://llama.test:8080/v1", "http://llama.test:8080/props"),
        ("http://llama.test:8080/v1/", "http://llama.test:8080/props"),
        ("http://llama.test:8080/v1?key=s3cret", "http://llama.test:8080/props?key=s3cret"),
        ("http://llama.test/proxy/llama/v1", "http://llama.test/proxy/llama/props"),
        ("http://llama.test:8080", "http://llama.test:8080/props"),
    ],
)
def test_props_is_asked_at_the_server_root_keeping_the_query(base_url: str, asked: str) -> None:
    mock = Mock(props(False))

    assert run(lambda b: b.effort_ignored("m1"), transport=httpx.MockTransport(mock), base_url=base_url)
    assert [str(r.url) for r in mock.requests] == [asked]


def test_models_asking_at_once_share_one_props_request() -> None:
    mock = Mock(props(False))

    async def together(backend: OpenAIBackend) -> list[str | None]:
        return list(await asyncio.gather(*(backend.effort_ignored(m) for m in ("a", "b", "c"))))

    reasons = run(together, transport=httpx.MockTransport(mock))

    assert all(reasons)
    assert len(mock.requests) == 1


def test_props_is_asked_once_per_backend_with_the_key_and_never_shows_it() -> None:
    mock = Mock(props(False))

    async def twice(backend: OpenAIBackend) -> list[str | None]:
        return [await backend.effort_ignored("m1"), await backend.effort_ignored("m2")]

    reasons = run(twice, transport=httpx.MockTransport(mock), base_url="http://mock.test:8080/v1", api_key="sk-secret")

    assert len(mock.requests) == 1
    assert mock.requests[0].url == "http://mock.test:8080/props"
    assert mock.requests[0].headers["authorization"] == "Bearer sk-secret"
    assert all(r is not None and "sk-secret" not in r and "mock.test:8080/v1" in r for r in reasons)
