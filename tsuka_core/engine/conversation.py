"""When a test's conversation cannot go on because of what the model produced: a cut call, refused arguments.

Both are the model's failure in that test, never a lost level: the step is
judged as the model left it and the later steps are recorded as not sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from tsuka_core.backends.base import ChatRequest, ChatResponse
from tsuka_core.backends.http import StatusError
from tsuka_core.engine.kept import kept_messages
from tsuka_core.engine.results import CheckResult, StepResult
from tsuka_core.judge.answer import Answer, ToolCall, without_reasoning
from tsuka_core.judge.outcome import Outcome
from tsuka_core.suite.model import Step

__all__ = ["CUT_CALL", "REFUSED", "answer_of", "chain_broken", "judged_calls", "refused_step"]

CUT_CALL = "arguments left incomplete by the cut, not JSON"
"""The problem of a call whose arguments the token limit cut off."""
REFUSED = "the server refused the tool call sent back: its arguments, as the model wrote them, are not valid JSON"
"""The detail that leads each check of a step whose request was refused for the model's own arguments."""


def answer_of(response: ChatResponse, tools: Sequence[Mapping[str, Any]]) -> Answer:
    """The answer as the checks see it: its text, its calls as :func:`judged_calls` reads them, the tools offered."""
    unstripped = without_reasoning(response.content) if response.content is not None else None
    if unstripped is not None and unstripped.strip() != response.text:
        unstripped = None  # a backend whose text is not its content stripped: the text is what was written
    return Answer(response.text, judged_calls(response), tools, response.cut_at_limit, unstripped)


def judged_calls(response: ChatResponse) -> tuple[ToolCall, ...]:
    """The calls as the checks see them: in an answer cut at the limit, arguments that needed repair are cut ones.

    json-repair would close a cut string and credit the model with arguments it
    never finished writing; the call is judged as it was left instead.
    """
    if not response.cut_at_limit:
        return response.tool_calls
    return tuple(_as_cut(call) for call in response.tool_calls)


def _as_cut(call: ToolCall) -> ToolCall:
    if not call.repaired and call.arguments_problem is None:
        return call
    return replace(call, arguments=None, arguments_problem=CUT_CALL)


def chain_broken(previous: ChatResponse | None, index: int) -> str | None:
    """Why step ``index`` (a ``toolResult`` step) is not sent, from the answer before it; None when it can be."""
    if previous is None or not previous.tool_calls:
        return f"not sent: step {index} needs a tool call from the step before, which made none"
    call = previous.tool_calls[0]
    if previous.cut_at_limit and (call.repaired or call.arguments_problem is not None):
        return f"not sent: step {index - 1} was cut at the token limit in the middle of its {call.name} call"
    return None


def refused_step(step: Step, index: int, request: ChatRequest, error: StatusError) -> StepResult:
    """The step whose request the server refused for the model's own tool-call arguments: each check failed."""
    detail = f"{REFUSED} (HTTP {error.status}: {error.server_message})"
    checks = tuple(CheckResult(c.location, c.type, c.weight, Outcome.fail(detail)) for c in step.checks)
    return StepResult(index, True, checks, kept_messages(request.messages), None, "invalid_arguments")
