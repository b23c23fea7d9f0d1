"""Run one test's steps against a backend, in order, and judge every check (docs/contract.md §3)."""

from __future__ import annotations

import asyncio
import json
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any

from tsuka_core.backends.base import Backend, ChatRequest, ChatResponse
from tsuka_core.backends.budget import BodyBudget
from tsuka_core.backends.http import StatusError
from tsuka_core.engine.answer_faults import answer_fault
from tsuka_core.engine.asking import ask, errored, opening, score, unsent
from tsuka_core.engine.conversation import answer_of, chain_broken, refused_step
from tsuka_core.engine.kept import kept_answer, kept_messages
from tsuka_core.engine.results import CheckResult, StepResult, TestResult
from tsuka_core.engine.turns import run_turns
from tsuka_core.judge.answer import Answer, ToolCall
from tsuka_core.judge.checks import check_roles, run_check
from tsuka_core.judge.outcome import Outcome
from tsuka_core.suite.model import Check, Step, Test
from tsuka_core.terms import Effort

__all__ = ["assistant_tool_message", "run_test"]


def assistant_tool_message(response: ChatResponse, call: ToolCall) -> dict[str, Any]:
    """The assistant message that carried ``call``: that call only, as the server sent it; reasoning removed."""
    if call.raw:
        raw = {**call.raw, "id": call.id}
        raw.setdefault("type", "function")
    else:
        arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
        raw = {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments}}
    return {"role": "assistant", "content": response.text or None, "tool_calls": [raw]}


def _judge(step: Step, answer: Answer) -> tuple[CheckResult, ...]:
    return tuple(CheckResult(c.location, c.type, c.weight, run_check(c.impl, answer)) for c in step.checks)


def _judged(step: Step, request: ChatRequest, response: ChatResponse, index: int) -> StepResult:
    """The step's checks judged; when one failed for a plain reason, that reason leads each failed detail.

    An answer left empty by thinking fails every check: it is never scored as if the model had answered.
    """
    checks = _judge(step, answer_of(response, request.tools))
    failed_checks = [c for c, r in zip(step.checks, checks, strict=True) if r.outcome.status == "failed"]
    failed = {role for c in failed_checks for role in check_roles(type(c.impl))}
    found = None
    if failed_checks or not (response.text or response.tool_calls):
        named = (_wanted_tool(c) for c in step.checks if "names_tool" in check_roles(type(c.impl)))
        found = answer_fault(response, request.tools, next(named, None), failed)
    kept, shortened = kept_answer(response)
    if found is None:
        return StepResult(index, True, checks, kept_messages(request.messages), kept, None, shortened)
    fault, why = found
    if fault == "thinking_only":
        checks = tuple(CheckResult(c.location, c.type, c.weight, Outcome.fail(why)) for c in checks)
    led = tuple(_led_by(c, why) for c in checks)
    return StepResult(index, True, led, kept_messages(request.messages), kept, fault, shortened)


def _wanted_tool(check: Check) -> str | None:
    value = getattr(check.params, "value", None)
    return value if isinstance(value, str) else None


def _led_by(result: CheckResult, why: str) -> CheckResult:
    """A failed check's detail led by the answer's fault, said once when one already holds the other."""
    if result.outcome.status != "failed":
        return result
    detail = result.outcome.detail
    text = why if detail in why else detail if why in detail else f"{why}; {detail}"
    return CheckResult(result.location, result.type, result.weight, Outcome.fail(text))


async def run_test(
    backend: Backend,
    test: Test,
    model: str,
    effort: Effort | None,
    limiter: AbstractAsyncContextManager[Any] | None = None,
    repeat: int = 1,
    budget: BodyBudget | None = None,
) -> TestResult:
    """Send each step of ``test`` in order and judge its checks; ``repeat`` is which run of the test this is.

    A request that fails for good ends the test with status ``error`` (its
    cause kept), unless the server refused what the model itself wrote: that
    step fails and the test is scored. :class:`EffortRejected` propagates so
    the sweep can measure the model without efforts, and :class:`~tsuka_core.engine.first_request.ModelRefused`
    (a 401, 403 or 404) so that it stops the model. With ``budget``, a large
    answer holds one of its places from its reading to the end of its judging.
    """
    if test.environment is not None:
        return await run_turns(backend, test, model, effort, limiter, repeat, budget)
    messages = opening(test)
    results: list[StepResult] = []
    previous: ChatResponse | None = None
    for index, step in enumerate(test.steps):
        if step.tool_result is not None:
            reason = chain_broken(previous, index)
            if previous is None or reason is not None:
                results.extend(unsent(i, s, reason or "") for i, s in enumerate(test.steps[index:], start=index))
                break
            call = previous.tool_calls[0]
            messages.append(assistant_tool_message(previous, call))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": step.tool_result})
        if step.prompt is not None:
            messages.append({"role": "user", "content": step.prompt})
        request = ChatRequest(model, tuple(messages), test.tools, effort, repeat)
        async with budget.scope() if budget is not None else nullcontext():
            answer = await ask(backend, request, limiter)
            if isinstance(answer, str):
                return errored(test, results, index, request, answer)
            if isinstance(answer, StatusError):
                results.append(refused_step(step, index, request, answer))
                reason = f"not sent: the server refused step {index}"
                results.extend(unsent(i, s, reason) for i, s in enumerate(test.steps[index + 1 :], start=index + 1))
                break
            response = answer
            if limiter is not None:
                # The limiter just let the next request in: let it go out before this answer is judged,
                # so that judging overlaps the wait for the server instead of delaying the request.
                await asyncio.sleep(0)
            if not response.tool_calls and response.text:
                messages.append({"role": "assistant", "content": response.text})
            # Judged off the loop: no other request's measured time waits on it.
            results.append(await asyncio.to_thread(_judged, step, request, response, index))
        previous = response
    return TestResult(test, "ok", score(results), tuple(results), repeat=repeat)
