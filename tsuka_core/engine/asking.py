"""What every kind of test does with a request: ask it, and say how a step or a test ended."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any

from tsuka_core.backends.base import Backend, ChatRequest, ChatResponse, EffortRejected
from tsuka_core.backends.http import StatusError
from tsuka_core.backends.masked_answers import masked_response
from tsuka_core.engine.first_request import refuses_model
from tsuka_core.engine.kept import kept_messages
from tsuka_core.engine.results import CheckResult, StepResult, TestResult
from tsuka_core.errors import RequestError
from tsuka_core.judge.outcome import Outcome
from tsuka_core.judge.scoring import score_checks
from tsuka_core.masking import mask_text
from tsuka_core.suite.model import Step, Test

__all__ = ["ask", "errored", "score", "unsent", "unsent_rest"]


def opening(test: Test) -> list[Mapping[str, Any]]:
    """The conversation before a test's first step: its system message, if any, then its earlier turns."""
    messages: list[Mapping[str, Any]] = [{"role": "system", "content": test.system}] if test.system else []
    messages.extend(test.messages)
    return messages


def unsent(index: int, step: Step, reason: str) -> StepResult:
    """Step ``index``, never sent: each of its checks failed for ``reason``."""
    checks = tuple(CheckResult(c.location, c.type, c.weight, Outcome.fail(reason)) for c in step.checks)
    return StepResult(index, False, checks)


def errored(test: Test, results: list[StepResult], index: int, request: ChatRequest, cause: str) -> TestResult:
    """The test ended as an error at step ``index`` (a request that failed for good), its cause kept."""
    results.append(StepResult(index, False, (), kept_messages(request.messages)))
    first = cause.splitlines()[0] if cause else cause
    return TestResult(test, "error", 0.0, tuple(results), f"step {index}: {first}", request.repeat)


def score(steps: list[StepResult]) -> float:
    """The test's score: its checks' weighted pass rate."""
    return score_checks((c.weight, c.outcome.passed) for s in steps for c in s.checks)


async def ask(
    backend: Backend, request: ChatRequest, limiter: AbstractAsyncContextManager[Any] | None
) -> ChatResponse | StatusError | str:
    """The answer; the error when the server refused the model's own tool-call arguments; else why it failed.

    Every secret the backend knows is masked in what comes back (``Backend.secrets``): a server may echo one.
    """
    try:
        async with limiter or nullcontext():
            return masked_response(await backend.complete(request), backend.secrets())
    except EffortRejected:
        raise
    except RequestError as exc:
        if isinstance(exc, StatusError) and exc.blames_answer:
            exc.args = (mask_text(str(exc), backend.secrets()),)
            exc.server_message = mask_text(exc.server_message, backend.secrets())
            return exc
        refused = refuses_model(exc)
        if refused is not None:
            raise refused from exc
        said = "server error on a tools request: " if request.tools and (exc.status or 0) >= 500 else ""
        return mask_text(f"{said}{exc}", backend.secrets())
    except Exception as exc:  # a backend plugin's bug ends this test as an error, not the run
        return mask_text(f"backend {backend.name!r} raised {type(exc).__name__}: {exc}", backend.secrets())


def unsent_rest(steps: Sequence[Step], start: int, reason: str) -> list[StepResult]:
    """Steps ``start`` onwards, never sent, each check failed for ``reason``."""
    return [unsent(i, s, reason) for i, s in enumerate(steps[start:], start=start)]
