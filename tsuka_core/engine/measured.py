"""The profile fields this engine measures beyond the TypeScript TSUKA's: speed sources, server facts, answer kinds."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from tsuka_core.backends.base import ServerFacts
from tsuka_core.engine.answer_faults import fault_counts
from tsuka_core.engine.metrics import avg_reasoning_tokens, level_speed
from tsuka_core.engine.results import LevelResult, TestResult
from tsuka_core.engine.speed_figures import speed_figures

__all__ = ["effort_effective", "measured_fields", "repeats_identical", "with_effort_effective"]


def measured_fields(
    tests: Sequence[TestResult], facts: ServerFacts | None, timing_names: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """``speedSource`` and what else is known of a level's answers and its server, as profile fields
    (``timing_names``: what the backend's server calls its timings, for the speed figures' formulas)."""
    speed = level_speed(tests)
    fields: dict[str, Any] = {"speedSource": speed.source}
    optional = {
        "promptTokensPerSecond": speed.prompt_tokens_per_second,
        "timeToFirstTokenMs": speed.time_to_first_token_ms,
        "avgReasoningTokens": avg_reasoning_tokens(tests),
    }
    fields.update({name: value for name, value in optional.items() if value is not None})
    figures = speed_figures(tests, timing_names)
    if figures:
        fields["speedFigures"] = figures
    faults = Counter(s.fault for t in tests for s in t.steps if s.fault is not None)
    if any(t.test.tools for t in tests):
        fields["toolCallsInText"] = faults["in_text"]
    if faults:
        fields["answerFaults"] = fault_counts(s.fault for t in tests for s in t.steps)
    server = facts.as_profile() if facts is not None else {}
    if server:
        fields["server"] = server
    if facts is not None and facts.supports_tools is False:
        fields["toolCallingServerSupport"] = False
    return fields


def effort_effective(levels: Sequence[LevelResult]) -> bool | None:
    """False when every level with the effort applied gave the same answers with the same token counts.

    None when fewer than two complete levels had the effort applied, so there is nothing to compare.
    """
    compared = [level for level in levels if level.effort_applied and level.complete]
    if len(compared) < 2:
        return None
    first = _answers(compared[0])
    return any(_answers(level) != first for level in compared[1:])


def with_effort_effective(levels: Sequence[LevelResult]) -> list[LevelResult]:
    """One model's levels with ``effortEffective`` recorded in each, when there is something to compare."""
    effective = effort_effective(levels)
    if effective is None:
        return list(levels)
    return [replace(level, measured={**level.measured, "effortEffective": effective}) for level in levels]


def repeats_identical(level: LevelResult) -> bool:
    """True when a level ran each test more than once and every run of every test gave the very same answers."""
    if level.repeats < 2:
        return False
    by_step: dict[tuple[Any, Any], set[tuple[Any, ...]]] = {}
    for answer in _answers(level):
        name, _repeat, step, *rest = answer
        by_step.setdefault((name, step), set()).add(tuple(rest))
    return bool(by_step) and all(len(answers) == 1 for answers in by_step.values())


def _answers(level: LevelResult) -> list[tuple[Any, ...]]:
    """Each request's answer (content, reasoning, calls, completion tokens), test by test, run by run."""
    return [
        (
            t.test.name,
            t.repeat,
            s.index,
            s.response.content,
            s.response.reasoning,
            tuple((c.name, json.dumps(c.arguments, sort_keys=True, default=str)) for c in s.response.tool_calls),
            s.response.completion_tokens,
        )
        for t in level.tests
        for s in t.steps
        if s.response is not None
    ]
