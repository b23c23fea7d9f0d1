"""A level's scorecard figures: its judged tests handed to the scorecard that knows its suite."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tsuka_core.engine.conversation import answer_of
from tsuka_core.engine.results import TestResult
from tsuka_core.judge.scorecard import JudgedCheck, JudgedTest
from tsuka_core.suite.model import Suite

__all__ = ["judged_tests", "scorecard_fields"]


def judged_tests(tests: Sequence[TestResult]) -> list[JudgedTest]:
    """Each test's first run as a scorecard sees it: every step's answer, and each check with its verdict."""
    found = []
    for result in tests:
        if result.repeat != 1:
            continue
        steps = []
        for step in result.steps:
            checks = result.test.steps[step.index].checks if step.index < len(result.test.steps) else ()
            judged = tuple(
                JudgedCheck(check.impl, check.weight, outcome.outcome)
                for check, outcome in zip(checks, step.checks, strict=False)
            )
            answer = None
            if step.response is not None:
                answer = answer_of(step.response, result.test.tools)
            steps.append((answer, judged))
        found.append(JudgedTest(result.test.name, result.test.category, result.score, result.status == "error",
                                tuple(steps)))  # fmt: skip
    return found


def scorecard_fields(suite: Suite, tests: Sequence[TestResult]) -> dict[str, Any]:
    """``scorecard`` (its name and figures) for a level of a suite a scorecard knows; nothing otherwise.

    A scorecard that raises gives no figures: its table then shows the suite as not measured.
    """
    scorecard = suite.scorecard
    if scorecard is None:
        return {}
    try:
        figures = scorecard.figures(suite.name, judged_tests(tests))
    except Exception:  # a plugin's bug: no figures, never the level lost
        return {}
    return {"scorecard": {"name": scorecard.name, "figures": {k: f.model_dump() for k, f in figures.items()}}}
