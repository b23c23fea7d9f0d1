"""Run test files against scripted answers: a backend that answers from a list, no server, no model."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import httpx

from tsuka_core.backends.base import Backend, BackendConfig, ChatRequest, ChatResponse
from tsuka_core.engine.runner import run_test
from tsuka_core.errors import SuiteError
from tsuka_core.judge.answer import ToolCall, strip_reasoning
from tsuka_core.plugins.registry import Registry, load_registry
from tsuka_core.suite.loading import load_suite
from tsuka_core.suite.model import Test
from tsuka_core.suite.testfile import parse_test
from tsuka_core.terms import Effort
from tsuka_core.testing.verdicts import TestVerdict

__all__ = ["ScriptedAnswer", "ScriptedBackend", "run_suite", "run_test_file", "tool_call"]

ScriptedAnswer = str | ChatResponse
"""One scripted answer: its text, or a whole :class:`~tsuka_core.ChatResponse` (tool calls, usage...)."""
Answers = Sequence[ScriptedAnswer] | Callable[[ChatRequest], ScriptedAnswer]


def tool_call(name: str, arguments: Mapping[str, Any], text: str = "", call_id: str = "call_0") -> ChatResponse:
    """An answer that calls tool ``name`` with ``arguments`` (and says ``text``)."""
    raw = {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return ChatResponse(text, (ToolCall(call_id, name, dict(arguments), raw=raw),), content=text)


class ScriptedBackend(Backend):
    """Answers each request with the next scripted answer; records every request in ``requests``."""

    name: ClassVar[str] = "scripted"

    def __init__(self, answers: Answers, config: BackendConfig | None = None) -> None:
        super().__init__(config or BackendConfig(), httpx.AsyncClient())
        self._answers = answers
        self._next = 0
        self.requests: list[ChatRequest] = []

    async def list_models(self) -> list[str]:
        """One model, ``scripted``."""
        return ["scripted"]

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """The next scripted answer (or what the answering function returns for ``request``)."""
        self.requests.append(request)
        if callable(self._answers):
            answer = self._answers(request)
        else:
            if self._next >= len(self._answers):
                raise AssertionError(f"request {self._next + 1} has no scripted answer (only {len(self._answers)})")
            answer = self._answers[self._next]
            self._next += 1
        if isinstance(answer, ChatResponse):
            return answer
        return ChatResponse(strip_reasoning(answer), content=answer, completion_tokens=len(answer.split()))


def _one_test(path: Path, registry: Registry) -> Test:
    try:
        raw = path.read_bytes()
        data = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SuiteError([f"{path.name}: cannot be read as JSON: {exc}"]) from None
    test, problems = parse_test(path.name, data, registry)
    if problems or test is None:
        raise SuiteError(problems or [f"{path.name}: not a test"])
    return test


async def run_test_file(
    path: Path | str,
    answers: Answers,
    *,
    registry: Registry | None = None,
    effort: Effort | None = None,
) -> TestVerdict:
    """Run the test file at ``path`` with ``answers`` as the model's, one per step, and judge them as a run does.

    ``answers`` is a list (one per request, in order) or a function of the
    :class:`~tsuka_core.ChatRequest`. The file is validated with ``registry``
    (default: every installed plugin); problems raise :class:`~tsuka_core.SuiteError`.
    Returns the :class:`TestVerdict`: name, category, status, score, every check's outcome.
    """
    test = _one_test(Path(path), registry or load_registry())
    return TestVerdict.of(await run_test(ScriptedBackend(answers), test, "scripted", effort))


async def run_suite(
    folder: Path | str,
    answers: Mapping[str, Answers] | Callable[[ChatRequest], ScriptedAnswer],
    *,
    registry: Registry | None = None,
    effort: Effort | None = None,
) -> list[TestVerdict]:
    """Run every test of a suite folder with scripted answers: a mapping of test name to answers, or one function.

    A test the mapping does not name is answered with empty text.
    """
    suite = load_suite(folder, registry)
    results: list[TestVerdict] = []
    for test in suite.tests:
        scripted: Answers = answers if callable(answers) else answers.get(test.name, [""] * len(test.steps))
        results.append(TestVerdict.of(await run_test(ScriptedBackend(scripted), test, "scripted", effort)))
    return results
