"""Speed and length of a level's answers: average completion tokens and tokens per second."""

from __future__ import annotations

from collections.abc import Sequence

from tsuka_core.engine.results import TestResult, group_runs
from tsuka_core.judge.scoring import round_half_up

__all__ = ["avg_completion_tokens", "tokens_per_second"]


def avg_completion_tokens(tests: Sequence[TestResult]) -> int:
    """Mean over tests of each test's mean completion tokens per request, rounded half-up to an integer.

    A test run several times counts once, with the requests of all its runs.
    Tests that sent no request are left out; 0 when none sent any.
    """
    pooled = ([c for run in group.runs for c in run.completion_tokens] for group in group_runs(tests))
    means = [sum(tokens) / len(tokens) for tokens in pooled if tokens]
    if not means:
        return 0
    return int(round_half_up(sum(means) / len(means), 0))


def tokens_per_second(tests: Sequence[TestResult]) -> float:
    """All completion tokens divided by the summed request durations, one decimal half-up; 0 without time."""
    seconds = sum(sum(t.durations) for t in tests)
    if seconds <= 0:
        return 0.0
    tokens = sum(sum(t.completion_tokens) for t in tests)
    return round_half_up(tokens / seconds, 1)
