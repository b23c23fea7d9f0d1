"""What the test kit returns for a test run on scripted answers: the test's verdict and each check's."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tsuka_core.backends.base import ChatResponse
from tsuka_core.engine.results import TestResult
from tsuka_core.judge.outcome import Outcome

__all__ = ["CheckVerdict", "TestVerdict"]


@dataclass(frozen=True)
class CheckVerdict:
    """One check of a test as a run judged it: the step it belongs to, where it stands, its type and outcome."""

    step: int
    """The step's index, from 0."""
    location: str
    """Where the check stands in its file: ``steps[1].checks[0]``."""
    type: str
    """The check type's name."""
    weight: float
    outcome: Outcome

    @property
    def passed(self) -> bool:
        """True when the check passed."""
        return self.outcome.passed


@dataclass(frozen=True)
class TestVerdict:
    """One test judged on scripted answers, as a run judges it: its score, or the error that stopped it."""

    __test__ = False  # not a pytest test class, whatever its name

    name: str
    """The test's ``name``."""
    category: str
    """``instruction``, ``json`` or ``toolCalling``."""
    status: str
    """``ok`` when every step was answered, ``error`` when a request failed for good (see ``error``)."""
    score: float
    """From 0 to 1: the weighted share of checks passed."""
    checks: tuple[CheckVerdict, ...]
    """Every check of every step sent, in file order."""
    answers: tuple[ChatResponse | None, ...]
    """Each step's answer as the checks judged it (None for a step not sent)."""
    error: str | None = None
    _result: TestResult | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, result: TestResult) -> TestVerdict:
        """The verdict of the engine's result."""
        checks = tuple(
            CheckVerdict(step.index, check.location, check.type, check.weight, check.outcome)
            for step in result.steps
            for check in step.checks
        )
        answers = tuple(step.response for step in result.steps)
        test = result.test
        return cls(test.name, test.category, result.status, result.score, checks, answers, result.error, result)

    @property
    def failed(self) -> tuple[CheckVerdict, ...]:
        """The checks that did not pass."""
        return tuple(c for c in self.checks if not c.passed)

    @property
    def test(self) -> Any:
        """Deprecated: the suite's test object; use ``name`` and ``category``."""
        _deprecated("test", "use .name and .category")
        return None if self._result is None else self._result.test

    @property
    def steps(self) -> Sequence[Any]:
        """Deprecated: the engine's step results; use ``checks`` and ``answers``."""
        _deprecated("steps", "use .checks (each with its .step) and .answers")
        return () if self._result is None else self._result.steps


def _deprecated(name: str, instead: str) -> None:
    warnings.warn(
        f"TestVerdict.{name} is deprecated since tsuka 0.2.0 and removed in 0.4.0; {instead}",
        DeprecationWarning,
        stacklevel=3,
    )
