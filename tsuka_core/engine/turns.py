"""Run a multi-turn test: each turn's prompt, then the model's steps until it calls no tool, every call executed.

As BFCL's multi-turn inference runs it: a step's calls are executed only
when every one of them has a name and arguments that are a JSON object as
written; a step that calls nothing, or whose calls cannot all be run, ends
the turn (its assistant message stays in the conversation). Each call's
result goes back as a tool message. More than :data:`MAX_STEPS` steps with
calls in one turn end the test: the turn fails and later turns are not sent.
After the model's turn, the turn's reference calls run in the reference
environment, and the turn's checks judge its final answer, every call the
model made in the turn, and the environments (:class:`~tsuka_core.judge.environment.TurnState`).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import replace
from typing import Any

from tsuka_core.backends.base import Backend, ChatRequest, ChatResponse
from tsuka_core.backends.budget import BodyBudget
from tsuka_core.backends.http import StatusError
from tsuka_core.engine.asking import ask, errored, opening, score, unsent_rest
from tsuka_core.engine.conversation import answer_of, refused_step
from tsuka_core.engine.envhost import EnvironmentHost, ToolEnvironmentError
from tsuka_core.engine.kept import kept_answer, kept_messages
from tsuka_core.engine.results import CheckResult, StepResult, TestResult
from tsuka_core.judge.answer import ToolCall
from tsuka_core.judge.checks import run_check
from tsuka_core.judge.environment import TurnState
from tsuka_core.judge.outcome import Outcome
from tsuka_core.suite.model import EnvironmentSpec, Step, Test
from tsuka_core.terms import Effort

__all__ = ["MAX_STEPS", "run_turns", "runnable_calls"]

MAX_STEPS = 20
"""The most steps with calls one turn may take (BFCL's ``MAXIMUM_STEP_LIMIT``); one more ends the test."""


def runnable_calls(response: ChatResponse) -> tuple[ToolCall, ...]:
    """The answer's calls when every one can be run (a name, arguments a JSON object as written); else none."""
    calls = response.tool_calls
    if not calls:
        return ()
    for call in calls:
        if not call.name or call.repaired or call.arguments_problem is not None:
            return ()
        if not isinstance(call.arguments, dict):
            return ()
    return calls


def _assistant(response: ChatResponse) -> dict[str, Any]:
    """The answer as the conversation keeps it: its text, and every call as the server sent it."""
    if not response.tool_calls:
        return {"role": "assistant", "content": response.text}
    sent = []
    for call in response.tool_calls:
        raw = dict(call.raw) if call.raw else {}
        if "function" not in raw:
            arguments = call.raw_arguments if call.raw_arguments is not None else "{}"
            raw = {"type": "function", "function": {"name": call.name, "arguments": arguments}}
        sent.append({**raw, "id": call.id, "type": raw.get("type", "function")})
    return {"role": "assistant", "content": response.text or None, "tool_calls": sent}


def _judged(turn: Step, index: int, request: ChatRequest, response: ChatResponse, calls: list[ToolCall],
            state: TurnState, forced: str | None) -> StepResult:  # fmt: skip
    """The turn's checks on its final answer, every call it made, and what it left in the environment."""
    if forced is not None:
        checks = tuple(CheckResult(c.location, c.type, c.weight, Outcome.fail(forced)) for c in turn.checks)
    else:
        base = answer_of(response, request.tools)
        answer = replace(base, tool_calls=tuple(calls), environment=state)
        checks = tuple(CheckResult(c.location, c.type, c.weight, run_check(c.impl, answer)) for c in turn.checks)
    kept, shortened = kept_answer(response)
    return StepResult(index, True, checks, kept_messages(request.messages), kept, None, shortened)


async def run_turns(
    backend: Backend,
    test: Test,
    model: str,
    effort: Effort | None,
    limiter: AbstractAsyncContextManager[Any] | None = None,
    repeat: int = 1,
    budget: BodyBudget | None = None,
) -> TestResult:
    """Run every turn of ``test`` (one with an ``environment``) and judge each turn's checks."""
    spec = test.environment
    assert spec is not None
    messages = opening(test)
    results: list[StepResult] = []
    try:
        host = EnvironmentHost(spec.cls, dict(spec.config), spec.reference)
        await host.__aenter__()
    except ToolEnvironmentError as exc:
        request = ChatRequest(model, tuple(messages), test.tools, effort, repeat)
        return errored(test, results, 0, request, f"the tool environment could not be built: {exc}")
    try:
        async with budget.scope() if budget is not None else nullcontext():
            return await _turns(backend, test, spec, host, messages, results, model, effort, limiter, repeat)
    finally:
        await host.__aexit__()


async def _turns(backend: Backend, test: Test, spec: EnvironmentSpec, host: EnvironmentHost,
                 messages: list[Mapping[str, Any]], results: list[StepResult], model: str, effort: Effort | None,
                 limiter: AbstractAsyncContextManager[Any] | None, repeat: int) -> TestResult:  # fmt: skip
    tools = list(test.tools)
    every_result: list[str] = []
    for index, turn in enumerate(test.steps):
        tools.extend(turn.reveal)
        messages.append({"role": "user", "content": turn.prompt or ""})
        calls: list[ToolCall] = []
        forced: str | None = None
        steps = 0
        while True:
            request = ChatRequest(model, tuple(messages), tuple(tools), effort, repeat)
            answer = await ask(backend, request, limiter)
            if isinstance(answer, str):
                return errored(test, results, index, request, answer)
            if isinstance(answer, StatusError):
                results.append(refused_step(turn, index, request, answer))
                results.extend(unsent_rest(test.steps, index + 1, f"not sent: the server refused turn {index}"))
                return TestResult(test, "ok", score(results), tuple(results), repeat=repeat)
            response = answer
            messages.append(_assistant(response))
            runnable = runnable_calls(response)
            if not runnable:
                break
            try:
                for call in runnable:
                    result = await host.call("model", call.name, dict(call.arguments or {}))
                    every_result.append(result)
                    calls.append(call)
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
            except ToolEnvironmentError as exc:
                forced = f"a call the model made ended its tool environment: {exc}"
                break
            steps += 1
            if steps > MAX_STEPS:
                forced = f"more than {MAX_STEPS} steps with calls in turn {index}: the model was stopped"
                break
        if forced is not None:
            state = TurnState(tuple(every_result), calls=len(calls))
            results.append(_judged(turn, index, request, response, calls, state, forced))
            results.extend(unsent_rest(test.steps, index + 1, f"not sent: turn {index} was stopped"))
            return TestResult(test, "ok", score(results), tuple(results), repeat=repeat)
        try:
            state = await _after_turn(host, spec, turn, every_result, len(calls))
        except ToolEnvironmentError as exc:
            return errored(test, results, index, request, f"the reference calls failed: {exc}")
        results.append(_judged(turn, index, request, response, calls, state, None))
    return TestResult(test, "ok", score(results), tuple(results), repeat=repeat)


async def _after_turn(host: EnvironmentHost, spec: EnvironmentSpec, turn: Step, every_result: list[str],
                      calls: int) -> TurnState:  # fmt: skip
    """The reference calls of the turn run, then what the checks see."""
    reference = [await host.call("reference", name, dict(arguments)) for name, arguments in turn.reference or ()]
    differences = await host.differences() if spec.reference else {}
    return TurnState(tuple(every_result), tuple(reference), differences, spec.reference, await host.state(), calls)
