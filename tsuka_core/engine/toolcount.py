"""Tool-count tolerance: the most tools a model is offered before its tool score falls below its one-tool score.

A suite measures it when it offers the same task (the same first prompt) with
one tool and with more, as the built-in ``toolcount`` suite does with 1, 4, 8,
16, 32 and 64 tools. The tool score at a count is the weighted mean score of
those tasks' tests at that count; the tolerance is the largest count up to
which every count measured scores within :data:`MARGIN` of the one-tool score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tsuka_core.engine.results import RepeatedTest
from tsuka_core.judge.scoring import category_score

__all__ = ["MARGIN", "ToolTask", "scores_by_count", "tolerance", "tool_scores_by_count", "toolcount_fields"]

ToolTask = tuple[str, int, float, float]
"""One tool test: its task (the first prompt), how many tools it offers, its weight and its score."""

MARGIN = 0.1
"""How far under the one-tool score a count's tool score may fall and still be tolerated (10 points)."""


def tool_scores_by_count(groups: Sequence[RepeatedTest]) -> dict[int, float]:
    """The tool score at each number of tools offered, of the tasks also offered with one tool; empty if none."""
    tool_tests = [g for g in groups if g.test.category == "toolCalling" and g.test.tools and g.test.steps]
    return scores_by_count(
        [(str(g.test.steps[0].prompt), len(g.test.tools), g.test.weight, g.score) for g in tool_tests]
    )


def scores_by_count(tests: Sequence[ToolTask]) -> dict[int, float]:
    """The weighted mean score at each tool count, of the tasks also offered with one tool; empty if none."""
    alone = {task for task, count, _, _ in tests if count == 1}
    tasks = [t for t in tests if t[0] in alone]
    counts = sorted({count for _, count, _, _ in tasks})
    if len(counts) < 2:
        return {}
    return {n: category_score([(w, s) for _, count, w, s in tasks if count == n]) for n in counts}


def tolerance(by_count: Mapping[int, float]) -> int | None:
    """The largest count up to which every count scores at least the one-tool score minus the margin."""
    if 1 not in by_count:
        return None
    floor = by_count[1] - MARGIN - 1e-9
    tolerated = 1
    for count in sorted(by_count):
        if by_count[count] < floor:
            break
        tolerated = count
    return tolerated


def toolcount_fields(groups: Sequence[RepeatedTest]) -> dict[str, Any]:
    """``toolCountScores`` (tool score by count) and ``toolCountTolerance``, for a suite that measures them."""
    by_count = tool_scores_by_count(groups)
    found = tolerance(by_count)
    if found is None:
        return {}
    return {"toolCountScores": {str(n): s for n, s in by_count.items()}, "toolCountTolerance": found}
