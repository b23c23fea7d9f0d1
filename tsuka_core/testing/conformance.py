"""The backend conformance suite: drive a backend class against a scripted server and check it keeps the contract.

docs/contract.md ("What a backend must do") lists the rules; each case here
tests one of them. A backend author describes their server's wire format in a
:class:`BackendKit` and calls :func:`check_backend` (or :func:`assert_conforms`).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx

from tsuka_core.backends.base import Backend, BackendConfig, ChatRequest, ChatResponse, EffortRejected
from tsuka_core.engine.runner import assistant_tool_message
from tsuka_core.errors import RequestError
from tsuka_core.testing.loopback import Reply, ScriptedServer

__all__ = ["CASES", "BackendKit", "CaseResult", "WireAnswer", "assert_conforms", "check_backend"]

TIMEOUT = 0.5
"""The backend's per-request time-out in the time-out case (the server waits four times as long)."""
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather of one city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


@dataclass(frozen=True)
class WireAnswer:
    """An answer for the kit to write in its server's format."""

    text: str = ""
    tool_calls: tuple[tuple[str, str, Mapping[str, Any]], ...] = ()
    """(id, tool name, arguments) of each call."""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    """None: the server reports no usage."""
    finish_reason: str = "stop"
    """``stop``, ``length`` (cut at the token limit) or ``tool_calls``."""


class BackendKit:
    """What the suite needs to know about one backend: its class, and how its server speaks.

    Subclass it, set ``backend`` and ``chat_path``, and implement :meth:`answer`
    (and :meth:`effort_refusal` when the backend applies efforts).
    """

    backend: ClassVar[type[Backend]]
    chat_path: ClassVar[str]
    """The path the backend posts answers to (``/v1/chat/completions``, ``/api/chat``)."""
    model: ClassVar[str] = "conformance-model"

    def config(self, base_url: str, *, timeout: float, retries: int) -> BackendConfig:
        """The configuration to create the backend with, pointing at the scripted server's root ``base_url``."""
        return BackendConfig(base_url=base_url, timeout=timeout, retries=retries, api_key="conformance-key")

    def answer(self, answer: WireAnswer) -> Any:
        """The JSON body of a 200 answer carrying ``answer``, in the server's format."""
        raise NotImplementedError

    def error(self, status: int, message: str) -> Any:
        """The JSON body of an error answer (default: OpenAI's ``{"error": {"message": ...}}``)."""
        del status
        return {"error": {"message": message}}

    def effort_refusal(self, effort: str) -> Reply:
        """The reply with which the server refuses ``effort`` for the model."""
        raise NotImplementedError

    def other(self, method: str, path: str) -> Reply:
        """The reply to a request for any path but ``chat_path`` (default: 404)."""
        return Reply(self.error(404, f"no route {method} {path}"), 404)


@dataclass(frozen=True)
class CaseResult:
    """One case of the suite: its name, whether the backend passed, and what was wrong (one line)."""

    name: str
    passed: bool
    detail: str = ""


Case = Callable[[BackendKit, ScriptedServer], Awaitable[None]]


def _request(kit: BackendKit, text: str = "Hello?", **fields: Any) -> ChatRequest:
    return ChatRequest(kit.model, [{"role": "user", "content": text}], **fields)


async def _complete(kit: BackendKit, server: ScriptedServer, request: ChatRequest, **config: Any) -> ChatResponse:
    settings = {"timeout": 10.0, "retries": 0, **config}
    async with httpx.AsyncClient() as client:
        backend = kit.backend(kit.config(server.url, **settings), client)
        try:
            return await backend.complete(request)
        finally:
            await backend.aclose()


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


async def usage_is_reported(kit: BackendKit, server: ScriptedServer) -> None:
    """The server's token counts arrive as prompt_tokens and completion_tokens, not flagged as estimated."""
    server.script(Reply(kit.answer(WireAnswer("The sky is blue.", prompt_tokens=11, completion_tokens=7))))
    response = await _complete(kit, server, _request(kit))
    _expect(response.text == "The sky is blue.", f"text {response.text!r}, expected 'The sky is blue.'")
    got = (response.prompt_tokens, response.completion_tokens, response.usage_estimated)
    _expect(got == (11, 7, False), f"(prompt, completion, estimated) = {got}, expected (11, 7, False)")


async def missing_usage_is_estimated(kit: BackendKit, server: ScriptedServer) -> None:
    """Without usage from the server, completion tokens are estimated from the text and flagged."""
    server.script(Reply(kit.answer(WireAnswer("one two three four five six seven eight"))))
    response = await _complete(kit, server, _request(kit))
    _expect(response.usage_estimated, "usage_estimated is False although the server sent no usage")
    _expect(response.completion_tokens > 0, "completion_tokens is 0: estimate it (tsuka_core.estimate_tokens)")


async def tool_calls_round_trip(kit: BackendKit, server: ScriptedServer) -> None:
    """A tool call arrives with its name and parsed arguments, and goes back to the server with its result."""
    answer = WireAnswer(tool_calls=(("call_7", "get_weather", {"city": "Rome"}),), finish_reason="tool_calls")
    server.script(Reply(kit.answer(answer)), Reply(kit.answer(WireAnswer("Sunny in Rome."))))
    first = _request(kit, "Weather in Rome?", tools=[WEATHER])
    response = await _complete(kit, server, first)
    calls = [(c.name, c.arguments) for c in response.tool_calls]
    _expect(calls == [("get_weather", {"city": "Rome"})], f"tool calls {calls}, expected get_weather(city=Rome)")
    call = response.tool_calls[0]
    result = {"role": "tool", "tool_call_id": call.id, "content": "Rome: sunny, 24 C"}
    second = ChatRequest(kit.model, [*first.messages, assistant_tool_message(response, call), result], [WEATHER])
    final = await _complete(kit, server, second)
    _expect(final.text == "Sunny in Rome.", f"the answer after the tool result is {final.text!r}")
    sent = json.dumps(server.requests_to()[-1].body)
    for part in ("get_weather", "Rome", "Rome: sunny, 24 C"):
        _expect(part in sent, f"the request after the tool call does not carry {part!r}")


async def effort_is_sent(kit: BackendKit, server: ScriptedServer) -> None:
    """A request with an effort differs on the wire from one without (the effort is applied, not dropped)."""
    if not kit.backend.applies_effort:
        return
    server.script(Reply(kit.answer(WireAnswer("a"))), Reply(kit.answer(WireAnswer("b"))))
    await _complete(kit, server, _request(kit))
    await _complete(kit, server, _request(kit, effort="medium"))
    plain, with_effort = (s.body for s in server.requests_to())
    _expect(plain != with_effort, "a request at effort 'medium' is sent exactly like one without an effort")


async def effort_refusal_is_effort_rejected(kit: BackendKit, server: ScriptedServer) -> None:
    """A server refusing the effort parameter raises EffortRejected, and the request is not re-sent without it."""
    if not kit.backend.applies_effort:
        return
    server.script(kit.effort_refusal("medium"), Reply(kit.answer(WireAnswer("resent"))))
    try:
        await _complete(kit, server, _request(kit, effort="medium"), retries=2)
    except EffortRejected:
        sent = len(server.requests_to())
        _expect(sent == 1, f"the refused request was sent {sent} times; send it once and raise EffortRejected")
        return
    except RequestError as error:
        raise AssertionError(f"raised {type(error).__name__} ({error}), expected EffortRejected") from None
    raise AssertionError("the refusal was not raised as EffortRejected")


async def _stops_at(kit: BackendKit, server: ScriptedServer, status: int) -> None:
    server.script(*[Reply(kit.error(status, "invalid api key"), status)] * 3)
    started = time.monotonic()
    try:
        await _complete(kit, server, _request(kit), retries=2)
    except RequestError as error:
        sent = len(server.requests_to())
        _expect(sent == 1, f"a {status} was retried ({sent} requests): it cannot change, stop at once")
        _expect(error.status == status, f"RequestError.status is {error.status}, expected {status}")
        _expect("\n" not in str(error), "the error message is more than one line")
        _expect(time.monotonic() - started < 5, "stopping took more than 5 s")
        return
    raise AssertionError(f"a {status} answer did not raise RequestError")


async def unauthorised_stops(kit: BackendKit, server: ScriptedServer) -> None:
    """A 401 raises RequestError (status 401) after one request: no retries."""
    await _stops_at(kit, server, 401)


async def forbidden_stops(kit: BackendKit, server: ScriptedServer) -> None:
    """A 403 raises RequestError (status 403) after one request: no retries."""
    await _stops_at(kit, server, 403)


async def _retried(kit: BackendKit, server: ScriptedServer, status: int) -> None:
    busy = Reply(kit.error(status, "busy"), status, {"Retry-After": "0"})
    server.script(busy, Reply(kit.answer(WireAnswer("after a retry", prompt_tokens=3, completion_tokens=3))))
    try:
        response = await _complete(kit, server, _request(kit), retries=2)
    except RequestError as error:
        raise AssertionError(f"a {status} then a good answer raised {type(error).__name__}: {error}") from None
    _expect(response.text == "after a retry", f"text {response.text!r} after the retry")
    sent = len(server.requests_to())
    _expect(sent == 2, f"{sent} requests for one {status} then a good answer, expected 2")


async def rate_limit_is_retried(kit: BackendKit, server: ScriptedServer) -> None:
    """A 429 (Retry-After: 0) is retried, and the next answer is returned."""
    await _retried(kit, server, 429)


async def server_error_is_retried(kit: BackendKit, server: ScriptedServer) -> None:
    """A 503 is retried, and the next answer is returned."""
    await _retried(kit, server, 503)


async def timeout_is_a_request_error(kit: BackendKit, server: ScriptedServer) -> None:
    """A server slower than the configured time-out raises RequestError within about that time."""
    server.script(*[Reply(kit.answer(WireAnswer("late")), delay=TIMEOUT * 4)] * 2)
    started = time.monotonic()
    try:
        await _complete(kit, server, _request(kit), timeout=TIMEOUT, retries=0)
    except RequestError:
        waited = time.monotonic() - started
        _expect(waited < TIMEOUT * 3, f"gave up after {waited:.1f} s with a {TIMEOUT} s time-out")
        return
    raise AssertionError(f"an answer {TIMEOUT * 4} s late was accepted with a {TIMEOUT} s time-out")


async def cut_answer_is_marked(kit: BackendKit, server: ScriptedServer) -> None:
    """An answer cut at the token limit has finish_reason 'length' (so the run can say it was cut)."""
    server.script(
        Reply(
            kit.answer(WireAnswer("The answer was cut", prompt_tokens=5, completion_tokens=4, finish_reason="length"))
        )
    )
    response = await _complete(kit, server, _request(kit))
    _expect(response.finish_reason == "length", f"finish_reason {response.finish_reason!r}, expected 'length'")
    _expect(response.cut_at_limit, "cut_at_limit is False for an answer cut at the token limit")


CASES: dict[str, Case] = {
    case.__name__: case
    for case in (
        usage_is_reported,
        missing_usage_is_estimated,
        tool_calls_round_trip,
        effort_is_sent,
        effort_refusal_is_effort_rejected,
        unauthorised_stops,
        forbidden_stops,
        rate_limit_is_retried,
        server_error_is_retried,
        timeout_is_a_request_error,
        cut_answer_is_marked,
    )
}
"""Every case, by name (use the names to parametrize a test)."""


async def _run(kit: BackendKit, name: str) -> CaseResult:
    with ScriptedServer(kit.chat_path, kit.other) as server:
        try:
            await CASES[name](kit, server)
        except AssertionError as failure:
            return CaseResult(name, False, str(failure))
        except Exception as error:  # a backend bug is a failed case, reported on one line
            return CaseResult(name, False, f"raised {type(error).__name__}: {error}".splitlines()[0])
    return CaseResult(name, True)


def check_backend(kit: BackendKit, cases: list[str] | None = None) -> list[CaseResult]:
    """Run the conformance cases (default: all of :data:`CASES`) against the kit's backend; one result each.

    Runs its own event loop: call it from a plain (not async) test.
    """
    return [asyncio.run(_run(kit, name)) for name in (cases or list(CASES))]


def assert_conforms(kit: BackendKit, cases: list[str] | None = None) -> None:
    """Raise AssertionError listing every failed case, one line each."""
    failed = [f"{r.name}: {r.detail}" for r in check_backend(kit, cases) if not r.passed]
    if failed:
        raise AssertionError(
            f"{kit.backend.__name__} breaks {len(failed)} rule(s) of docs/contract.md:\n" + "\n".join(failed)
        )
