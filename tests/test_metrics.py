"""Average completion tokens and tokens per second over a level's test results."""

from __future__ import annotations

from collections.abc import Sequence

from tsuka_core.backends.base import ChatResponse
from tsuka_core.engine import results
from tsuka_core.engine.metrics import avg_completion_tokens, tokens_per_second
from tsuka_core.engine.results import StepResult
from tsuka_core.suite import model


def result(requests: Sequence[tuple[int, float]], name: str = "t") -> results.TestResult:
    """A test whose requests returned ``(completion tokens, seconds)`` each; unsent steps carry no response."""
    steps = [
        StepResult(index=i, sent=True, checks=(), response=ChatResponse(text="", completion_tokens=tok, duration=sec))
        for i, (tok, sec) in enumerate(requests)
    ]
    steps.append(StepResult(index=len(steps), sent=False, checks=()))
    test = model.Test(file=f"{name}.json", name=name, category="json", steps=())
    return results.TestResult(test=test, status="ok", score=1.0, steps=tuple(steps))


def test_average_is_a_mean_of_per_test_means() -> None:
    tests = [result([(100, 1.0), (201, 1.0)]), result([(50, 1.0)])]
    assert avg_completion_tokens(tests) == 100  # (150.5 + 50) / 2 = 100.25


def test_average_rounds_half_up() -> None:
    assert avg_completion_tokens([result([(2, 1.0)]), result([(3, 1.0)])]) == 3  # 2.5
    assert avg_completion_tokens([result([(4, 1.0)]), result([(5, 1.0)])]) == 5  # 4.5, not banker's 4


def test_tests_without_requests_are_skipped() -> None:
    assert avg_completion_tokens([result([(10, 1.0)]), result([])]) == 10
    assert avg_completion_tokens([result([])]) == 0
    assert avg_completion_tokens([]) == 0


def test_tokens_per_second_over_the_whole_level() -> None:
    tests = [result([(100, 2.0), (50, 0.5)]), result([(30, 0.5)])]
    assert tokens_per_second(tests) == 60.0  # 180 tokens / 3 s


def test_tokens_per_second_rounds_half_up_to_one_decimal() -> None:
    assert tokens_per_second([result([(1, 4.0)])]) == 0.3  # 0.25
    assert tokens_per_second([result([(1, 3.0)])]) == 0.3  # 0.333...


def test_tokens_per_second_without_time_is_zero() -> None:
    assert tokens_per_second([result([(10, 0.0)])]) == 0.0
    assert tokens_per_second([result([])]) == 0.0
    assert tokens_per_second([]) == 0.0
