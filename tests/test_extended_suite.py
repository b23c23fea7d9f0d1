"""The built-in extended suite: its size, answers that pass and answers that fail, and gaming that scores small."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from answerers import Answerer
from loopback import LoopbackServer, Reply

from tsuka_core import Answer, Registry
from tsuka_core.backends.base import BackendConfig
from tsuka_core.engine import results
from tsuka_core.judge.answer import ToolCall
from tsuka_core.judge.checks import run_check
from tsuka_core.session import RunOptions, RunReport, run_benchmark
from tsuka_core.suite import model
from tsuka_core.suite.loading import load_suite
from tsuka_core.suite.model import Suite
from tsuka_core.terms import Effort

ROOT = Path(__file__).resolve().parents[1]
EXTENDED = ROOT / "tsuka_checks_builtin" / "suites" / "extended"
ANSWERS: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "extended_answers.json").read_text(encoding="utf-8")
)
"""Per test name, the ``reference`` answers (one per step) and a list of ``wrong`` ones.

A step's answer is ``{"text": ...}`` or ``{"calls": [[name, arguments], ...]}``.
"""

pytestmark = pytest.mark.usefixtures("fast_retries")


@pytest.fixture(scope="module")
def extended(registry: Registry) -> Suite:
    return load_suite(EXTENDED, registry)


def as_answer(step: dict[str, Any]) -> Answer:
    """The Answer the checks would see for one scripted step."""
    calls = tuple(ToolCall(id=f"call_{i}", name=n, arguments=a) for i, (n, a) in enumerate(step.get("calls", [])))
    return Answer(step.get("text", ""), calls)


def outcomes(test: model.Test, steps: list[dict[str, Any]]) -> list[tuple[str, bool]]:
    """Each check of ``test`` (located) and whether the scripted answers pass it."""
    assert len(steps) == len(test.steps), test.name
    return [
        (check.location, run_check(check.impl, as_answer(answer)).passed)
        for step, answer in zip(test.steps, steps, strict=True)
        for check in step.checks
    ]


def test_the_suite_has_45_tests_and_15_of_each_category(extended: Suite) -> None:
    per_category = Counter(t.category for t in extended.tests)
    assert len(extended.tests) >= 45
    assert set(per_category) == {"instruction", "json", "toolCalling"}
    assert min(per_category.values()) >= 15, per_category


def test_every_test_has_scripted_answers(extended: Suite) -> None:
    assert sorted(ANSWERS) == sorted(t.name for t in extended.tests)


def test_reference_answers_pass_every_check(extended: Suite) -> None:
    reference = {t.name: outcomes(t, ANSWERS[t.name]["reference"]) for t in extended.tests}
    failed = [(name, where) for name, seen in reference.items() for where, ok in seen if not ok]
    assert failed == []


def test_every_wrong_answer_fails_a_check(extended: Suite) -> None:
    unfailed = [
        t.name for t in extended.tests for wrong in ANSWERS[t.name]["wrong"] if all(ok for _, ok in outcomes(t, wrong))
    ]
    assert unfailed == []


BLANKS = ({"text": ""}, {"text": "{}"}, {"calls": [["none_of_these", {}]]})


def test_every_check_can_fail(extended: Suite) -> None:
    """Each check fails on one of the test's wrong answers, or on an empty text, ``{}`` or a call of an unknown tool."""
    never_failed = []
    for test in extended.tests:
        candidates = [*ANSWERS[test.name]["wrong"], *([blank] * len(test.steps) for blank in BLANKS)]
        seen = [dict(outcomes(test, steps)) for steps in candidates]
        never_failed += [(test.name, where) for where in seen[0] if all(s[where] for s in seen)]
    assert never_failed == [], never_failed


# --- through the engine ----------------------------------------------------------------------------------------------


@dataclass
class Quiet:
    """A sweep observer that keeps nothing but notes."""

    notes: list[str] = field(default_factory=list)

    def level_started(self, model: str, effort: Effort, applied: bool, total: int) -> None:
        del model, effort, applied, total

    def test_done(self, model: str, effort: Effort, result: results.TestResult) -> None:
        del model, effort, result

    def note(self, message: str) -> None:
        self.notes.append(message)


def run(suite: Suite, registry: Registry, answerer: Answerer, tmp_path: Path) -> RunReport:
    """The extended suite run through the whole engine against a loopback server answering with ``answerer``."""
    with LoopbackServer(answerer, models=["m1"]) as server:
        options = RunOptions(
            models=["m1"],
            config=BackendConfig(base_url=server.base_url, retries=1, timeout=10),
            efforts=("none",),
            store_path=tmp_path / "profiles.json",
        )
        return asyncio.run(run_benchmark(options, suite, registry, Quiet()))


def scripted(suite: Suite, kind: str) -> Answerer:
    """Answer every request with the scripted ``kind`` answers, finding the test by its first prompt."""
    by_prompt = {t.steps[0].prompt: t.name for t in suite.tests}

    def answer(body: dict[str, Any], n: int) -> Reply:
        del n
        messages = body["messages"]
        first = next(m["content"] for m in messages if m["role"] == "user")
        step = ANSWERS[by_prompt[first]][kind][sum(1 for m in messages if m["role"] == "assistant")]
        calls = tuple((name, args) for name, args in step.get("calls", []))
        return Reply(content=step.get("text"), tool_calls=calls)

    return answer


def never_calls(body: dict[str, Any], n: int) -> Reply:
    del body, n
    return Reply.text("I can answer that without any tool: the answer is yes.")


def first_tool_empty(body: dict[str, Any], n: int) -> Reply:
    del n
    tools = body.get("tools") or []
    return Reply.tool_call(tools[0]["function"]["name"], {}) if tools else Reply.text("ok")


def echo(body: dict[str, Any], n: int) -> Reply:
    del n
    return Reply.text(str(body["messages"][-1].get("content") or ""))


def empty_object(body: dict[str, Any], n: int) -> Reply:
    del body, n
    return Reply.text("{}")


def level(report: RunReport) -> results.LevelResult:
    (sweep,) = report.sweeps
    (only,) = sweep.levels
    return only


def test_reference_answers_score_large_through_the_engine(extended: Suite, registry: Registry, tmp_path: Path) -> None:
    result = level(run(extended, registry, scripted(extended, "reference"), tmp_path))
    assert dict(result.scores) == {"instruction": 1.0, "json": 1.0, "toolCalling": 1.0}
    assert result.tier == "large"


GAMING = {"never_calls": never_calls, "first_tool_empty": first_tool_empty, "echo": echo, "empty_object": empty_object}


@pytest.mark.parametrize("answerer", GAMING.values(), ids=GAMING.keys())
def test_gaming_answerers_score_small(extended: Suite, registry: Registry, tmp_path: Path, answerer: Answerer) -> None:
    result = level(run(extended, registry, answerer, tmp_path))
    assert result.tier == "small", dict(result.scores)
    assert max(result.scores.values()) < 0.5, dict(result.scores)
