"""tsuka_core.testing: run_check, scripted test files, and the backend conformance suite on the openai backend."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

import tsuka_core
from tsuka_core.backends.openai import OpenAIBackend
from tsuka_core.testing import (
    CASES,
    BackendKit,
    Reply,
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
    assert caught.value.problems == [
        "word_count: value: Input should be greater than or equal to 0",
        "word_count: extra: Extra inputs are not permitted",
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
    assert (good.status, good.score) == ("ok", 1.0)
    assert bad.score == 0.0
    assert "needs a tool call" in bad.steps[1].checks[0].outcome.detail


def test_a_suite_folder_runs_on_scripted_answers_by_test_name(tmp_path: Path) -> None:
    (tmp_path / "30_weather.json").write_text(json.dumps(WEATHER_TEST), encoding="utf-8")
    results = asyncio.run(run_suite(tmp_path, {"weather": [tool_call("get_weather", {}), "sunny"]}))
    assert [(r.test.name, r.score) for r in results] == [("weather", 1.0)]


def test_an_invalid_test_file_is_a_suite_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "01_bad.json"
    path.write_text(json.dumps({**WEATHER_TEST, "category": "nope"}), encoding="utf-8")
    with pytest.raises(tsuka_core.SuiteError, match=r"^01_bad.json: category"):
        asyncio.run(run_test_file(path, ["x"]))
