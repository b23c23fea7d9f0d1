"""Running one test against a real server: the messages of every request, chains, unsent steps and errors."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from answerers import perfect, tool_shy, which_test
from loopback import Handler, LoopbackServer, Reply

from tsuka_core import Registry
from tsuka_core.backends.base import BackendConfig, EffortRejected
from tsuka_core.backends.openai import OpenAIBackend
from tsuka_core.engine import results
from tsuka_core.engine.runner import run_test
from tsuka_core.suite import model
from tsuka_core.suite.loading import default_suite_path, load_suite
from tsuka_core.suite.model import Suite
from tsuka_core.terms import Effort

DEFAULT_SUITE = default_suite_path()
"""The default suite as installed (in a source checkout, ``benchmarks/``): profiles measured with it are the
default suite's."""
REFUSAL = "Unrecognized request argument supplied: reasoning_effort"
FIRST_CALL: dict[str, Any] = {
    "id": "call_Xy7Q",
    "type": "function",
    "function": {"name": "find_customer", "arguments": '{"name":"Daniel Hughes"}'},
}
SECOND_CALL: dict[str, Any] = {
    "id": "call_Zz91",
    "type": "function",
    "function": {"name": "convert_currency", "arguments": '{"amount":1,"from":"EUR","to":"USD"}'},
}
LOOKUP: dict[str, Any] = {
    "type": "function",
    "function": {"name": "lookup", "description": "Look a word up.", "parameters": {"type": "object"}},
}


pytestmark = pytest.mark.usefixtures("fast_retries")


def named(suite: Suite, name: str) -> model.Test:
    return next(t for t in suite.tests if t.name == name)


def custom_test(tmp_path: Path, registry: Registry, **data: Any) -> model.Test:
    """One test written to a suite of its own and loaded (validated) from there."""
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "10_custom.json").write_text(json.dumps({"name": "custom", "category": "toolCalling", **data}))
    return load_suite(folder, registry).tests[0]


def completion(**message: Any) -> Reply:
    """A chat completion whose message is exactly ``message`` (plus the assistant role), as a server sends it."""
    body = {
        "id": "chatcmpl-raw",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13},
    }
    return Reply.body(json.dumps(body).encode())


def run(
    test: model.Test, handler: Handler, *, effort: Effort | None = "none", retries: int = 1
) -> tuple[results.TestResult, list[Any]]:
    """Run ``test`` as model ``m1`` against a loopback server answering with ``handler``; the result and the bodies."""
    with LoopbackServer(handler) as server:

        async def main() -> results.TestResult:
            async with httpx.AsyncClient(timeout=10) as client:
                config = BackendConfig(base_url=server.base_url, retries=retries, timeout=10)
                return await run_test(OpenAIBackend(config, client), test, "m1", effort)

        result = asyncio.run(main())
    return result, server.bodies


def chain_step(body: dict[str, Any]) -> int:
    return which_test(body)[1]


# --- what a chain sends back ----------------------------------------------------------------------------------------


def test_second_step_sends_back_only_the_first_call_as_the_server_sent_it(suite: Suite) -> None:
    catena = named(suite, "catena_tool_distrattori")

    def handler(body: dict[str, Any], n: int) -> Reply:
        if chain_step(body) == 0:
            return completion(content=None, tool_calls=[FIRST_CALL, SECOND_CALL])
        return perfect(body, n)

    result, bodies = run(catena, handler)

    assert len(bodies) == 2
    prompt = {"role": "user", "content": catena.steps[0].prompt}
    assert bodies[0]["messages"] == [prompt]
    assert bodies[1]["messages"] == [
        prompt,
        {"role": "assistant", "content": "", "tool_calls": [FIRST_CALL]},
        {"role": "tool", "tool_call_id": "call_Xy7Q", "content": catena.steps[1].tool_result},
    ]
    assert result.status == "ok"
    assert result.score == 1.0


def test_tool_result_and_prompt_of_one_step_follow_the_call_in_order(suite: Suite) -> None:
    write_append = named(suite, "tool_write_append")

    result, bodies = run(write_append, perfect)

    first_args = {"path": "deploy.log", "content": "[START] Deployment started"}
    call = {"id": "call_0", "type": "function", "function": {"name": "write_file", "arguments": json.dumps(first_args)}}
    assert len(bodies) == 2
    assert bodies[1]["messages"] == [
        {"role": "user", "content": write_append.steps[0].prompt},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_0", "content": "File 'deploy.log' written successfully (27 bytes)."},
        {"role": "user", "content": write_append.steps[1].prompt},
    ]
    assert result.score == 1.0


def test_a_longer_chain_carries_every_call_and_result(tmp_path: Path, registry: Registry) -> None:
    test = custom_test(
        tmp_path,
        registry,
        tools=[LOOKUP],
        steps=[
            {"prompt": "Look up a.", "checks": [{"type": "tool_called", "value": "lookup"}]},
            {"toolResult": "a: first", "checks": [{"type": "tool_arg_equals", "arg": "word", "value": "b"}]},
            {"toolResult": "b: second", "checks": [{"type": "contains", "value": "done"}]},
        ],
    )
    replies = [Reply.tool_call("lookup", {"word": "a"}), Reply.tool_call("lookup", {"word": "b"}), Reply.text("done")]

    result, bodies = run(test, lambda body, n: replies[n])

    def call(word: str) -> dict[str, Any]:
        arguments = json.dumps({"word": word})
        return {"id": "call_0", "type": "function", "function": {"name": "lookup", "arguments": arguments}}

    assert bodies[2]["messages"] == [
        {"role": "user", "content": "Look up a."},
        {"role": "assistant", "content": "", "tool_calls": [call("a")]},
        {"role": "tool", "tool_call_id": "call_0", "content": "a: first"},
        {"role": "assistant", "content": "", "tool_calls": [call("b")]},
        {"role": "tool", "tool_call_id": "call_0", "content": "b: second"},
    ]
    assert result.score == 1.0


@pytest.mark.parametrize(
    ("content", "sent_back"),
    [
        (None, ""),
        ("<think>Look the customer up first.</think>", ""),
        ("<think>Look the customer up first.</think>\nLet me look that up.", "Let me look that up."),
    ],
)
def test_a_tool_call_turn_is_sent_back_without_reasoning(suite: Suite, content: str | None, sent_back: str) -> None:
    catena = named(suite, "catena_tool_distrattori")

    def handler(body: dict[str, Any], n: int) -> Reply:
        if chain_step(body) == 0:
            return completion(content=content, reasoning_content="private plan", tool_calls=[FIRST_CALL])
        return perfect(body, n)

    _result, bodies = run(catena, handler)

    assert bodies[1]["messages"][1] == {"role": "assistant", "content": sent_back, "tool_calls": [FIRST_CALL]}
    sent = json.dumps(bodies[1])
    assert "<think>" not in sent
    assert "private plan" not in sent


def test_arguments_that_are_not_an_object_fail_the_arg_checks_and_go_back_unchanged(suite: Suite) -> None:
    catena = named(suite, "catena_tool_distrattori")
    broken = {"id": "call_b", "type": "function", "function": {"name": "find_customer", "arguments": "[1, 2]"}}

    def handler(body: dict[str, Any], n: int) -> Reply:
        return completion(content=None, tool_calls=[broken]) if chain_step(body) == 0 else perfect(body, n)

    result, bodies = run(catena, handler)

    assert bodies[1]["messages"][1] == {"role": "assistant", "content": "", "tool_calls": [broken]}
    first = result.steps[0].checks
    assert [(c.type, c.outcome.status) for c in first] == [("tool_called", "passed"), ("tool_arg_regex", "failed")]
    assert "not a JSON object" in first[1].outcome.detail
    assert result.status == "ok"
    assert result.score == 0.88  # 7 of 8


# --- what joins the history -----------------------------------------------------------------------------------------


def test_a_text_answer_joins_the_history_without_its_reasoning(tmp_path: Path, registry: Registry) -> None:
    test = custom_test(
        tmp_path,
        registry,
        category="instruction",
        system="Answer with one word.",
        steps=[
            {"prompt": "Name a colour.", "checks": [{"type": "contains", "value": "blue"}]},
            {"prompt": "Another one?", "checks": [{"type": "contains", "value": "red"}]},
        ],
    )

    def handler(body: dict[str, Any], n: int) -> Reply:
        if n == 0:
            return completion(content="<think>a colour, then</think>\n  blue  ", reasoning_content="private plan")
        return Reply.text("red")

    result, bodies = run(test, handler)

    assert bodies[1]["messages"] == [
        {"role": "system", "content": "Answer with one word."},
        {"role": "user", "content": "Name a colour."},
        {"role": "assistant", "content": "blue"},
        {"role": "user", "content": "Another one?"},
    ]
    assert "private plan" not in json.dumps(bodies[1])
    assert result.score == 1.0


@pytest.mark.parametrize(
    "first_reply",
    [
        Reply.text(""),
        Reply.text("<think>only thinking</think>"),
        Reply.text(None, reasoning="only a reasoning field"),
        Reply.tool_call("lookup", {"word": "x"}, content="Calling it."),
    ],
    ids=["empty", "think-only", "reasoning-only", "tool-call-with-text"],
)
def test_answers_without_text_or_with_a_call_stay_out_of_the_history(
    tmp_path: Path, registry: Registry, first_reply: Reply
) -> None:
    test = custom_test(
        tmp_path,
        registry,
        tools=[LOOKUP],
        steps=[
            {"prompt": "First.", "checks": [{"type": "not_empty"}]},
            {"prompt": "Second.", "checks": [{"type": "not_empty"}]},
        ],
    )

    _result, bodies = run(test, lambda body, n: first_reply if n == 0 else Reply.text("done"))

    assert bodies[1]["messages"] == [{"role": "user", "content": "First."}, {"role": "user", "content": "Second."}]


# --- tools and effort on the request --------------------------------------------------------------------------------


def test_tools_and_tool_choice_are_sent_only_with_tools(suite: Suite) -> None:
    for test in suite.tests:
        _result, bodies = run(test, perfect)
        assert len(bodies) == len(test.steps), test.name
        for body in bodies:
            if test.tools:
                assert body["tools"] == list(test.tools), test.name
                assert body["tool_choice"] == "auto", test.name
            else:
                assert "tools" not in body, test.name
                assert "tool_choice" not in body, test.name


def test_required_tier_is_not_sent_to_the_server(tmp_path: Path, registry: Registry) -> None:
    test = custom_test(
        tmp_path,
        registry,
        tools=[{**LOOKUP, "requiredTier": "large"}],
        prompt="Look up x.",
        checks=[{"type": "tool_called", "value": "lookup"}],
    )

    result, bodies = run(test, lambda body, n: Reply.tool_call("lookup", {"word": "x"}))

    assert bodies[0]["tools"] == [LOOKUP]
    assert result.score == 1.0


@pytest.mark.parametrize("effort", ["none", "low", "medium", "xhigh"])
def test_the_effort_is_sent_verbatim(suite: Suite, effort: Effort) -> None:
    _result, bodies = run(named(suite, "tool_write_append"), perfect, effort=effort)

    assert [body["reasoning_effort"] for body in bodies] == [effort, effort]


def test_without_an_effort_no_effort_parameter_is_sent(suite: Suite) -> None:
    _result, bodies = run(named(suite, "tool_write_append"), perfect, effort=None)

    assert len(bodies) == 2
    assert all("reasoning_effort" not in body for body in bodies)


# --- broken chains and failures -------------------------------------------------------------------------------------


def test_a_chain_broken_at_the_first_step_sends_nothing_more(tmp_path: Path, registry: Registry) -> None:
    test = custom_test(
        tmp_path,
        registry,
        tools=[LOOKUP],
        steps=[
            {"prompt": "Look up x.", "checks": [{"type": "tool_called", "value": "lookup", "weight": 2}]},
            {"toolResult": "x: a letter", "checks": [{"type": "tool_called", "value": "lookup"}]},
            {"prompt": "Summarise.", "checks": [{"type": "not_empty"}, {"type": "contains", "value": "letter"}]},
        ],
    )

    result, bodies = run(test, lambda body, n: Reply.text("I cannot."))

    assert len(bodies) == 1
    assert result.status == "ok"
    assert result.score == 0.0
    assert [step.sent for step in result.steps] == [True, False, False]
    first = result.steps[0].checks[0].outcome
    assert first.status == "failed"
    assert not first.detail.startswith("not sent")
    unsent = [c for step in result.steps[1:] for c in step.checks]
    assert [c.location for c in unsent] == ["steps[1].checks[0]", "steps[2].checks[0]", "steps[2].checks[1]"]
    assert all(c.outcome.status == "failed" and c.outcome.detail.startswith("not sent") for c in unsent)


def test_a_chain_broken_half_way_keeps_what_was_measured(tmp_path: Path, registry: Registry) -> None:
    test = custom_test(
        tmp_path,
        registry,
        tools=[LOOKUP],
        steps=[
            {"prompt": "Look up x.", "checks": [{"type": "tool_called", "value": "lookup"}]},
            {"toolResult": "x: a letter", "checks": [{"type": "tool_called", "value": "lookup"}]},
            {"toolResult": "y: another letter", "checks": [{"type": "not_empty"}]},
        ],
    )

    def handler(body: dict[str, Any], n: int) -> Reply:
        return Reply.tool_call("lookup", {"word": "x"}) if n == 0 else Reply.text("x is a letter.")

    result, bodies = run(test, handler)

    assert len(bodies) == 2
    assert [step.sent for step in result.steps] == [True, True, False]
    assert [c.outcome.status for step in result.steps for c in step.checks] == ["passed", "failed", "failed"]
    assert result.steps[2].checks[0].outcome.detail.startswith("not sent")
    assert result.score == 0.33


def test_tool_shy_answers_break_both_default_chains(suite: Suite) -> None:
    for name in ("catena_tool_distrattori", "tool_write_append"):
        result, bodies = run(named(suite, name), tool_shy)
        assert len(bodies) == 1, name
        assert result.score == 0.0, name
        assert [step.sent for step in result.steps] == [True, False], name


def test_a_request_that_fails_for_good_ends_the_test_in_error(suite: Suite) -> None:
    catena = named(suite, "catena_tool_distrattori")

    def handler(body: dict[str, Any], n: int) -> Reply:
        return perfect(body, n) if chain_step(body) == 0 else Reply.error(500, "the model crashed")

    result, bodies = run(catena, handler, retries=2)

    assert len(bodies) == 4  # one step-0 request, then 1 + 2 retries of step 1
    assert result.status == "error"
    assert result.score == 0.0
    assert result.error is not None
    assert result.error.startswith("step 1: ")
    assert "HTTP 500" in result.error
    assert "the model crashed" in result.error


def test_a_refused_effort_is_raised_and_never_resent(suite: Suite) -> None:
    with LoopbackServer(lambda body, n: Reply.error(400, REFUSAL)) as server:

        async def main() -> results.TestResult:
            async with httpx.AsyncClient(timeout=10) as client:
                config = BackendConfig(base_url=server.base_url, retries=3, timeout=10)
                return await run_test(OpenAIBackend(config, client), named(suite, "frase_8_parole"), "m1", "low")

        with pytest.raises(EffortRejected, match="reasoning_effort"):
            asyncio.run(main())

    assert [body["reasoning_effort"] for body in server.bodies] == ["low"]
