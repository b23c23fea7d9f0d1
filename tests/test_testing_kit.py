"""tsuka_core.testing: run_check, scripted test files, and the backend conformance suite on the openai backend."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

import tsuka_core
from tsuka_core.backends.openai import OpenAIBackend
from tsuka_core.testing import (
    CASES,
    BackendKit,
    Reply,
    ScriptedServer,
    WireAnswer,
    assert_conforms,
    check_backend,
    judge,
    registry_of,
    run_check,
    run_suite,
    run_test_file,
    tool_call,
)


class OpenAIKit(BackendKit):
    """How an OpenAI-compatible server speaks, for the built-in backend."""

    backend = OpenAIBackend
    chat_path = "/v1/chat/completions"

    def config(self, base_url: str, *, timeout: float, retries: int) -> tsuka_core.BackendConfig:
        return super().config(f"{base_url}/v1", timeout=timeout, retries=retries)

    def answer(self, answer: WireAnswer) -> Any:
        calls = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, n, a in answer.tool_calls
        ]
        message: dict[str, Any] = {"role": "assistant", "content": answer.text or None}
        if calls:
            message["tool_calls"] = calls
        body: dict[str, Any] = {"choices": [{"message": message, "finish_reason": answer.finish_reason}]}
        if answer.completion_tokens is not None:
            body["usage"] = {"prompt_tokens": answer.prompt_tokens, "completion_tokens": answer.completion_tokens}
        return body

    def effort_refusal(self, effort: str) -> Reply:
        return Reply(self.error(400, f"Unrecognized request argument supplied: reasoning_effort={effort}"), 400)


@pytest.mark.parametrize("case", list(CASES))
def test_the_openai_backend_conforms(case: str) -> None:
    [result] = check_backend(OpenAIKit(), [case])
    assert result.passed, result.detail


class Careless(OpenAIBackend):
    """An OpenAI backend that forgets what the contract asks: it drops usage and the finish reason."""

    name: ClassVar[str] = "careless"

    async def complete(self, request: tsuka_core.ChatRequest) -> tsuka_core.ChatResponse:
        response = await super().complete(request)
        return tsuka_core.ChatResponse(response.text, response.tool_calls, completion_tokens=0)


def test_a_backend_that_breaks_the_contract_fails_the_cases_it_breaks() -> None:
    class CarelessKit(OpenAIKit):
        backend = Careless

    results = {r.name: r for r in check_backend(CarelessKit())}
    failed = sorted(name for name, r in results.items() if not r.passed)
    assert failed == ["cut_answer_is_marked", "missing_usage_is_estimated", "usage_is_reported"]
    assert (
        results["usage_is_reported"].detail
        == "(prompt, completion, estimated) = (None, 0, False), expected (11, 7, False)"
    )
    with pytest.raises(AssertionError, match=r"Careless breaks 3 rule\(s\) of docs/contract.md:\nusage_is_reported"):
        assert_conforms(CarelessKit())


def test_run_check_judges_by_name_or_class_and_validates_the_params() -> None:
    assert run_check("word_count", {"value": 3}, "one two three") == tsuka_core.Outcome.ok("expected 3 words, got 3")
    cls = registry_of().check_type("contains")
    assert cls is not None
    assert run_check(cls, {"value": "x"}, "abc").status == "failed"
    with pytest.raises(tsuka_core.SuiteError) as caught:
        run_check("word_count", {"value": -1, "extra": 1}, "a")
    assert caught.value.problems == [  # worded as 'tsuka validate' words them
        "word_count: value: Input should be greater than or equal to 0",
        "word_count: extra: unknown key for check type 'word_count'",
    ]
    with pytest.raises(tsuka_core.SuiteError) as caught:
        run_check("first_word", {}, "a")
    assert caught.value.problems == ["first_word: value: required by check type 'first_word'"]
    with pytest.raises(tsuka_core.SuiteError) as caught:
        run_check("word_count", {"min": 5, "max": 2}, "a")
    assert caught.value.problems == ["word_count: parameters: min 5 is above max 2"]
    with pytest.raises(tsuka_core.SuiteError) as caught:
        run_check("regex", {"value": "(", "flags": "q"}, "a")
    assert caught.value.problems == [
        "regex: value: regex does not compile: missing ) at position 1",
        "regex: flags: unknown regex flag(s) 'q'; use any of 'imsgu'",
    ]
    with pytest.raises(tsuka_core.SuiteError, match="unknown check type 'no_such'"):
        run_check("no_such", {}, "a")


def test_judge_turns_an_exception_into_errored() -> None:
    class Explodes(tsuka_core.CheckType[tsuka_core.NoParams]):
        """Raise."""

        name = "explodes"

        def evaluate(self, answer: tsuka_core.Answer) -> tsuka_core.Outcome:
            raise ZeroDivisionError("bug")

    outcome = judge(Explodes(tsuka_core.NoParams()), "text")
    assert outcome == tsuka_core.Outcome.error("explodes raised ZeroDivisionError: bug")


WEATHER_TEST = {
    "name": "weather",
    "category": "toolCalling",
    "tools": [
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}
    ],
    "steps": [
        {"prompt": "Weather in Rome?", "checks": [{"type": "tool_called", "value": "get_weather"}]},
        {"toolResult": "sunny", "checks": [{"type": "contains", "value": "sunny"}]},
    ],
}


def test_a_test_file_runs_on_scripted_answers(tmp_path: Path) -> None:
    path = tmp_path / "30_weather.json"
    path.write_text(json.dumps(WEATHER_TEST), encoding="utf-8")
    good = asyncio.run(run_test_file(path, [tool_call("get_weather", {"city": "Rome"}), "It is sunny."]))
    bad = asyncio.run(run_test_file(path, ["I cannot look that up."]))
    assert (good.name, good.category, good.status, good.score) == ("weather", "toolCalling", "ok", 1.0)
    assert [(c.step, c.location, c.type, c.passed) for c in good.checks] == [
        (0, "steps[0].checks[0]", "tool_called", True),
        (1, "steps[1].checks[0]", "contains", True),
    ]
    assert good.answers[1] is not None
    assert good.answers[1].text == "It is sunny."
    assert bad.score == 0.0
    assert [c.location for c in bad.failed] == ["steps[0].checks[0]", "steps[1].checks[0]"]
    assert "needs a tool call" in bad.checks[1].outcome.detail


def test_a_verdict_keeps_the_0_2_attributes_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "30_weather.json"
    path.write_text(json.dumps(WEATHER_TEST), encoding="utf-8")
    verdict = asyncio.run(run_test_file(path, [tool_call("get_weather", {"city": "Rome"}), "It is sunny."]))
    with pytest.warns(DeprecationWarning, match=r"TestVerdict.test is deprecated .* use .name and .category"):
        assert verdict.test.name == "weather"
    with pytest.warns(DeprecationWarning, match=r"TestVerdict.steps is deprecated"):
        assert verdict.steps[1].checks[0].outcome.passed


def test_a_suite_folder_runs_on_scripted_answers_by_test_name(tmp_path: Path) -> None:
    (tmp_path / "30_weather.json").write_text(json.dumps(WEATHER_TEST), encoding="utf-8")
    results = asyncio.run(run_suite(tmp_path, {"weather": [tool_call("get_weather", {}), "sunny"]}))
    assert [(r.name, r.score) for r in results] == [("weather", 1.0)]


def test_an_invalid_test_file_is_a_suite_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "01_bad.json"
    path.write_text(json.dumps({**WEATHER_TEST, "category": "nope"}), encoding="utf-8")
    with pytest.raises(tsuka_core.SuiteError, match=r"^01_bad.json: category"):
        asyncio.run(run_test_file(path, ["x"]))


def test_a_scripted_server_takes_its_replies_as_arguments_or_as_one_list() -> None:
    answer = {"choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}
    with ScriptedServer("/v1/chat/completions") as server:
        for scripted in ([Reply(answer), Reply(answer, 503)], (Reply(answer), Reply(answer, 503))):
            server.script(scripted)
            statuses = [httpx.post(f"{server.url}/v1/chat/completions", json={}).status_code for _ in range(2)]
            assert statuses == [200, 503]
        server.script(Reply(answer), Reply(answer, 503))
        assert len(server.queue) == 2
        with pytest.raises(TypeError, match=r"takes Reply objects .* got dict"):
            server.script([answer])  # type: ignore[list-item]
    weird = ScriptedServer("/x", other=lambda method, path: "oops")  # type: ignore[arg-type,return-value]
    with weird:
        got = httpx.get(f"{weird.url}/y")
    assert got.status_code == 500
    assert "answered with a str, not a Reply" in got.text


def test_a_call_goes_back_key_for_key_so_signed_reasoning_reaches_the_next_request(tmp_path: Path) -> None:
    """docs/contract.md: a backend keeps a provider's signed thinking in ToolCall.raw; the next request carries it."""
    from tsuka_core.engine.runner import run_test
    from tsuka_core.suite.loading import load_suite
    from tsuka_core.testing import ScriptedBackend

    (tmp_path / "30_weather.json").write_text(json.dumps(WEATHER_TEST), encoding="utf-8")
    [test] = load_suite(tmp_path).tests
    signed = {"type": "thinking", "thinking": "Rome, so get_weather.", "signature": "c2lnbmVk"}
    call = tool_call("get_weather", {"city": "Rome"})
    raw = {**call.tool_calls[0].raw, "thinking": signed}
    answer = tsuka_core.ChatResponse("", (tsuka_core.ToolCall("call_0", "get_weather", {"city": "Rome"}, raw=raw),))
    backend = ScriptedBackend([answer, "It is sunny."])
    result = asyncio.run(run_test(backend, test, "scripted", None))
    assert result.score == 1.0
    sent = backend.requests[1].messages
    assistant = next(m for m in sent if m["role"] == "assistant")
    assert assistant["tool_calls"][0]["thinking"] == signed
    assert "Rome, so" not in str(assistant["content"])
