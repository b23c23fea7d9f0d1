"""What a run found: check, step, test and level results, as the runner produces them."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, Protocol, TypeVar

from tsuka_core.backends.base import ChatResponse
from tsuka_core.judge.outcome import Outcome
from tsuka_core.judge.scoring import mean_score, score_spread
from tsuka_core.suite.model import Test
from tsuka_core.terms import CATEGORIES, Category, Effort, Tier

__all__ = [
    "BORDERLINE",
    "PASSED",
    "UNMEASURED",
    "CheckResult",
    "Confidence",
    "LevelResult",
    "RepeatedTest",
    "Run",
    "RunScores",
    "StepResult",
    "TestResult",
    "TestStatus",
    "Tries",
    "group_runs",
    "runs_by",
]

TestStatus = Literal["ok", "error"]

UNMEASURED = "unmeasured"
"""What stands in for the tier of a level where no test was measured."""

BORDERLINE = 0.8
"""A tier whose confidence is under this is borderline."""


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
    fault: str | None = None
    """The plain kind of a failed answer (``in_text``, ``cut``...; see ``engine.answer_faults``), or None."""
    shortened: int | None = None
    """The answer's length in characters when ``response`` keeps only its start (``engine.kept``); None: whole."""


@dataclass(frozen=True)
class TestResult:
    """One test of one model at one effort: its score, or the error that stopped it."""

    test: Test
    status: TestStatus
    score: float
    steps: tuple[StepResult, ...] = ()
    error: str | None = None
    """Why the test could not be measured (a request that failed for good)."""
    repeat: int = 1
    """Which run of the test this is, from 1 to the level's ``repeats``."""

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


class Run(Protocol):
    """One run of a test, live or recorded: its score and which run it was."""

    @property
    def score(self) -> float:
        """The run's score."""

    @property
    def repeat(self) -> int:
        """Which run it was, from 1."""


R = TypeVar("R", bound=Run)


def runs_by(items: Iterable[R], key: Callable[[R], Hashable]) -> list[tuple[R, ...]]:
    """``items`` grouped by ``key``, in the order each key first appears, each group in repeat order."""
    groups: dict[Hashable, list[R]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return [tuple(sorted(runs, key=lambda r: r.repeat)) for runs in groups.values()]


class RunScores:
    """The score a test run several times counts (the mean of its ``runs``' scores) and their spread."""

    runs: Sequence[Run]

    @property
    def scores(self) -> list[float]:
        """Each run's score, in run order."""
        return [r.score for r in self.runs]

    @property
    def score(self) -> float:
        """The mean of the runs' scores, rounded half-up to two decimals."""
        return mean_score(self.scores)

    @property
    def spread(self) -> float:
        """The population standard deviation of the runs' scores (0 for a single run)."""
        return score_spread(self.scores)


@dataclass(frozen=True)
class RepeatedTest(RunScores):
    """Every run of one test at one level, with the score the level counts (their mean) and its spread."""

    test: Test
    runs: tuple[TestResult, ...]

    @property
    def tries(self) -> Tries:
        """Its runs as the statistics see them."""
        return Tries(self.test.name, self.test.category, self.test.weight, tuple(self.scores))


def group_runs(tests: Sequence[TestResult]) -> list[RepeatedTest]:
    """``tests`` grouped by test, in the order each test first appears, runs in repeat order."""
    return [RepeatedTest(runs[0].test, runs) for runs in runs_by(tests, lambda r: id(r.test))]


PASSED = 1.0
"""The score a run needs to count as passed."""


@dataclass(frozen=True)
class Tries:
    """One test's runs as the statistics see them (the bootstrap, pass^k, the paired bootstrap): its name, category,
    weight and each run's score."""

    name: str
    category: str
    weight: float
    scores: tuple[float, ...]

    @property
    def passed(self) -> int:
        """How many runs scored 1."""
        return sum(1 for s in self.scores if s >= PASSED)

    @property
    def flaky(self) -> bool:
        """Passed some runs and failed others."""
        return 0 < self.passed < len(self.scores)


@dataclass(frozen=True)
class Confidence:
    """A 95% interval per category score, and the share of resamples that give the measured tier.

    Computed by ``engine.confidence``'s bootstrap.
    """

    intervals: Mapping[Category, tuple[float, float]]
    tier_confidence: float

    @property
    def borderline(self) -> bool:
        """Whether the tier is too uncertain to rely on (confidence under :data:`BORDERLINE`)."""
        return self.tier_confidence < BORDERLINE

    def as_profile(self) -> dict[str, Any]:
        """The profile fields: ``intervals`` (``[lo, hi]`` per category) and ``tierConfidence``."""
        return {
            "intervals": {c: list(self.intervals[c]) for c in CATEGORIES},
            "tierConfidence": self.tier_confidence,
        }


@dataclass(frozen=True)
class LevelResult:
    """The whole suite for one model at one effort: scores, tier and speed, or what failed."""

    model: str
    effort: Effort
    """The level stored: the requested one, or ``none`` when efforts could not be applied."""
    effort_applied: bool
    tests: tuple[TestResult, ...]
    """Every run of every test, test by test in suite order, each test's runs in repeat order."""
    scores: Mapping[Category, float]
    tier: Tier
    tokens_per_second: float
    avg_completion_tokens: int
    usage_estimated: bool = False
    suite_hash: str = ""
    suite_path: str = ""
    """The folder of the suite measured with, as loaded."""
    provider: str = ""
    backend: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Backend-specific facts to store with the profile (sampling of an in-process model, say)."""
    repeats: int = 1
    """How many times each test was run (``--repeats``)."""
    measured: Mapping[str, Any] = field(default_factory=dict)
    """Profile fields beyond those TSUKA writes (``speedSource``, ``server``...), in profile form."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    """What every request was sent with, as record fields (``sampling``, ``backendOptions``; ``engine.record``)."""
    confidence: Confidence | None = None
    """The bootstrap of the level's tests, set once by the sweep; None: not computed yet (see ``level_confidence``)."""
    tested_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    """When the level was measured (scored): the one ``testedAt`` its record carries to the store and the history."""
    endpoint: str | None = None
    """The project file's endpoint that answered (``local``, say): it leads the record's provider. The level's
    one record is ``engine.record.record_of(level)``, built the first time it is asked for and kept with it."""

    @property
    def per_test(self) -> list[RepeatedTest]:
        """Each test once, with all its runs, its mean score and its spread."""
        return group_runs(self.tests)

    @property
    def measured_any(self) -> bool:
        """True when at least one test was measured; a level without any has no tier to show."""
        return any(t.status == "ok" for t in self.tests)

    @property
    def shown_tier(self) -> str:
        """The tier, or ``unmeasured`` when no test was measured (a server that was down, say)."""
        return self.tier if self.measured_any else UNMEASURED

    @property
    def complete(self) -> bool:
        """True when every test was measured (none ended in error)."""
        return all(t.status == "ok" for t in self.tests)

    @property
    def errors(self) -> list[str]:
        """``test name: cause`` for each test that ended in error."""
        return [f"{self.run_label(t)}: {t.error}" for t in self.tests if t.status == "error"]

    def run_label(self, result: TestResult) -> str:
        """The test's name, with ``(run K of N)`` when the level ran each test more than once."""
        if self.repeats > 1:
            return f"{result.test.name} (run {result.repeat} of {self.repeats})"
        return result.test.name
