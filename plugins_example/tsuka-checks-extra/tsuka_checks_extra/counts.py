"""Check types that count things in an answer against a range: words, tool calls (sentences: built in)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import model_validator

from tsuka_core import Answer, CheckParams, CheckType, Count, Outcome

__all__ = ["CountOrRangeParams", "RangeParams", "ToolCallCount", "WordCountRange"]


def _check_bounds(exact: int | None, low: int | None, high: int | None) -> None:
    """Raise ValueError unless the bounds name one exact count or a non-empty range."""
    if exact is not None and (low is not None or high is not None):
        raise ValueError("give either value or min/max, not both")
    if exact is None and low is None and high is None:
        raise ValueError("needs value, min or max")
    if low is not None and high is not None and low > high:
        raise ValueError(f"min ({low}) is greater than max ({high})")


def _admits(count: int, exact: int | None, low: int | None, high: int | None) -> bool:
    if exact is not None:
        return count == exact
    return (low is None or count >= low) and (high is None or count <= high)


def _expected(exact: int | None, low: int | None, high: int | None) -> str:
    if exact is not None:
        return str(exact)
    if low is not None and high is not None:
        return f"{low} to {high}"
    return f"at least {low}" if low is not None else f"at most {high}"


# docs:start range-params
class RangeParams(CheckParams):
    """A count between ``min`` and ``max``, both inclusive; at least one of the two."""

    min: Count | None = None
    """The smallest count that passes (inclusive)."""
    max: Count | None = None
    """The largest count that passes (inclusive)."""

    @model_validator(mode="after")
    def _bounds(self) -> RangeParams:
        if self.min is None and self.max is None:
            raise ValueError("needs min, max or both")
        _check_bounds(None, self.min, self.max)
        return self

    def admits(self, count: int) -> bool:
        """True when ``count`` lies in the range."""
        return _admits(count, None, self.min, self.max)

    def expected(self) -> str:
        """The range in words: ``3 to 5``, ``at least 3``, ``at most 5``."""
        return _expected(None, self.min, self.max)


# docs:end range-params


class CountOrRangeParams(CheckParams):
    """An exact count in ``value``, or a range with ``min`` and/or ``max`` (inclusive)."""

    value: Count | None = None
    """The exact count expected (instead of min/max)."""
    min: Count | None = None
    """The smallest count that passes (inclusive)."""
    max: Count | None = None
    """The largest count that passes (inclusive)."""

    @model_validator(mode="after")
    def _bounds(self) -> CountOrRangeParams:
        _check_bounds(self.value, self.min, self.max)
        return self

    def admits(self, count: int) -> bool:
        """True when ``count`` is the exact count, or lies in the range."""
        return _admits(count, self.value, self.min, self.max)

    def expected(self) -> str:
        """The expectation in words: ``3``, ``3 to 5``, ``at least 3``, ``at most 5``."""
        return _expected(self.value, self.min, self.max)


# docs:start word-count-range
class WordCountRange(CheckType[RangeParams]):
    """Pass when the answer has between `min` and `max` white-space separated words (inclusive)."""

    name = "word_count_range"
    params_model = RangeParams
    example: ClassVar[dict[str, Any]] = {"min": 50, "max": 80}

    def evaluate(self, answer: Answer) -> Outcome:
        words = len(answer.text.split())
        return Outcome.check(self.params.admits(words), f"{words} words, expected {self.params.expected()}")


# docs:end word-count-range


class ToolCallCount(CheckType[CountOrRangeParams]):
    """Pass when the answer made `value` tool calls, or between `min` and `max` (parallel calls)."""

    name = "tool_call_count"
    params_model = CountOrRangeParams
    example: ClassVar[dict[str, Any]] = {"min": 2, "weight": 2}

    def evaluate(self, answer: Answer) -> Outcome:
        calls = answer.tool_calls
        made = ", ".join(call.name for call in calls) or "none"
        return Outcome.check(
            self.params.admits(len(calls)), f"{len(calls)} tool calls ({made}), expected {self.params.expected()}"
        )
