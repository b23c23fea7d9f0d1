"""What a run found: check, step, test and level results, as the runner produces them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tsuka_core.backends.base import ChatResponse, Effort
from tsuka_core.model import Category, Test
from tsuka_core.outcome import Outcome
from tsuka_core.scoring import Tier

__all__ = ["CheckResult", "LevelResult", "StepResult", "TestResult", "TestStatus"]

TestStatus = Literal["ok", "error"]


@dataclass(frozen=True)
class CheckResult:
    """One check's outcome, with where it stands and its weight."""

    location: str
    type: str
    weight: float
    outcome: Outcome


@dataclass(frozen=True)
class StepResult:
    """One step: what was sent, what came back, and each check's outcome."""

    index: int
    sent: bool
    """False when the chain broke before this step and it was never sent."""
    checks: tuple[CheckResult, ...]
    messages: Sequence[Mapping[str, Any]] = ()
    """The conversation as sent for this step."""
    response: ChatResponse | None = None


@dataclass(frozen=True)
class TestResult:
    """One test of one model at one effort: its score, or the error that stopped it."""

    test: Test
    status: TestStatus
    score: float
    steps: tuple[StepResult, ...] = ()
    error: str | None = None
    """Why the test could not be measured (a request that failed for good)."""

    @property
    def completion_tokens(self) -> list[int]:
        """Completion tokens of each request sent."""
        return [s.response.completion_tokens for s in self.steps if s.response is not None]

    @property
    def durations(self) -> list[float]:
        """Seconds each request sent took."""
        return [s.response.duration for s in self.steps if s.response is not None]

    @property
    def usage_estimated(self) -> bool:
        """True when any request's completion tokens were estimated."""
        return any(s.response.usage_estimated for s in self.steps if s.response is not None)


@dataclass(frozen=True)
class LevelResult:
    """The whole suite for one model at one effort: scores, tier and speed, or what failed."""

    model: str
    effort: Effort
    """The level stored: the requested one, or ``none`` when efforts could not be applied."""
    effort_applied: bool
    tests: tuple[TestResult, ...]
    scores: Mapping[Category, float]
    tier: Tier
    tokens_per_second: float
    avg_completion_tokens: int
    usage_estimated: bool = False
    suite_hash: str = ""
    provider: str = ""
    backend: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Backend-specific facts to store with the profile (sampling of an in-process model, say)."""

    @property
    def complete(self) -> bool:
        """True when every test was measured (none ended in error)."""
        return all(t.status == "ok" for t in self.tests)

    @property
    def errors(self) -> list[str]:
        """``test name: cause`` for each test that ended in error."""
        return [f"{t.test.name}: {t.error}" for t in self.tests if t.status == "error"]
