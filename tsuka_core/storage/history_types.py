"""What the run history holds, as read back: a run, its levels, their tests, steps and checks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tsuka_core.backends.base import ChatResponse
from tsuka_core.engine.results import RunScores, runs_by
from tsuka_core.record.level import LevelRecord
from tsuka_core.storage.level_columns import COMPLETE, UNMEASURED

__all__ = ["StoredCheck", "StoredLevel", "StoredRun", "StoredStep", "StoredTest", "StoredTestRuns", "group_tests"]


@dataclass(frozen=True)
class StoredCheck:
    """One check's recorded outcome."""

    location: str
    type: str
    weight: float
    status: str
    detail: str


@dataclass(frozen=True)
class StoredStep:
    """One recorded step: the conversation as sent, the answer, and each check's outcome."""

    index: int
    sent: bool
    messages: Sequence[Mapping[str, Any]]
    response: ChatResponse | None
    cached: bool
    checks: tuple[StoredCheck, ...]
    cut: bool = False
    """The answer was larger than the history keeps (``MAX_ANSWER_BYTES``): stored cut, not to be judged again."""
    fault: str | None = None
    """The failure kind of a failed answer (``engine.answer_faults``), or None (none, or recorded before kinds were)."""


@dataclass(frozen=True)
class StoredTest:
    """One recorded test of one level."""

    name: str
    file: str
    category: str
    weight: float
    tools: Sequence[Mapping[str, Any]]
    status: str
    score: float
    error: str | None
    steps: tuple[StoredStep, ...] = ()
    repeat: int = 1
    """Which run of the test this is, from 1 to its level's ``repeats``."""

    @property
    def duration(self) -> float:
        """Seconds its requests took."""
        return sum(s.response.duration for s in self.steps if s.response is not None)


@dataclass(frozen=True)
class StoredTestRuns(RunScores):
    """Every recorded run of one test at one level, with the score the level counted (their mean) and its spread."""

    runs: tuple[StoredTest, ...]
    """In repeat order; never empty."""

    @property
    def first(self) -> StoredTest:
        """The first run (name, file, category and tools are the same in every run)."""
        return self.runs[0]

    @property
    def name(self) -> str:
        """The test's name."""
        return self.runs[0].name

    @property
    def repeated(self) -> bool:
        """True when the test ran more than once."""
        return len(self.runs) > 1

    @property
    def status(self) -> str:
        """``ok`` when every run was measured, ``error`` when any ended in error."""
        return "ok" if all(t.status == "ok" for t in self.runs) else "error"

    @property
    def duration(self) -> float:
        """Seconds the requests of every run took."""
        return sum(t.duration for t in self.runs)

    def label(self, index: int) -> str:
        """``run K of N`` for the run at ``index`` (0-based)."""
        return f"run {index + 1} of {len(self.runs)}"


def group_tests(tests: Sequence[StoredTest]) -> list[StoredTestRuns]:
    """``tests`` grouped by name, in the order each name first appears, each test's runs in repeat order."""
    return [StoredTestRuns(runs) for runs in runs_by(tests, lambda t: t.name)]


@dataclass(frozen=True)
class StoredLevel:
    """One recorded model@effort: its keys, what the run did with it, and its record, where every figure is read."""

    model: str
    effort: str
    record: LevelRecord
    """The level's record as written (``record.LevelRecord``): tier, scores, speed, repeats, intervals...; for a
    level of an older layout, what its columns said (no ``testResults``, intervals, sampling or speed sources:
    those layouts did not keep them)."""
    status: str = COMPLETE
    """``complete`` (every test measured), ``partial`` (some ended in error) or ``unmeasured`` (none measured)."""
    stored: bool = False
    """Whether the run wrote it to the profile store."""
    recommended: bool = False
    """Whether it is the effort the run recommended."""
    notes: Sequence[str] = ()
    """What the run said about it (each note once)."""
    tests: tuple[StoredTest, ...] = ()
    """Every recorded run of every test, test by test, runs in repeat order."""
    name: str = ""
    """The model's name in the profile store: ``NAME:model`` when two endpoints of the run served it, else the model."""
    endpoint: str | None = None
    """The project file's endpoint that answered, when the run measured its endpoints."""
    backend: str = ""
    """The backend that answered (the run's, unless the run spanned several endpoints)."""
    provider: str = ""
    """Where the answers came from, as the history stores it (base URLs redacted)."""

    @property
    def complete(self) -> bool:
        """Whether every test of the level was measured."""
        return self.status == COMPLETE

    @property
    def tier(self) -> str:
        """The record's tier, or ``unmeasured`` when no test was measured (or the record has none)."""
        if self.status == UNMEASURED or self.record.tier is None:
            return UNMEASURED
        return self.record.tier

    @property
    def scores(self) -> Mapping[str, float]:
        """The record's category scores (none when it has none)."""
        return self.record.scores or {}

    @property
    def repeats(self) -> int:
        """How many times each test was run (``--repeats``): the record's ``repeats``, 1 without."""
        return self.record.repeats or 1

    @property
    def key(self) -> str:
        """``model@effort``, the model named as it is stored (``NAME:model@effort`` for a name two endpoints served)."""
        return f"{self.name or self.model}@{self.effort}"

    @property
    def per_test(self) -> list[StoredTestRuns]:
        """Each test once with all its recorded runs, in the order the tests were recorded."""
        return group_tests(self.tests)

    def runs_of(self, name: str) -> tuple[StoredTest, ...]:
        """The recorded runs of the test ``name``, in repeat order (none when it was not recorded)."""
        return tuple(sorted((t for t in self.tests if t.name == name), key=lambda t: t.repeat))


@dataclass(frozen=True)
class StoredRun:
    """One recorded run (or rescore) and, when loaded whole, its levels."""

    id: int
    kind: str
    status: str
    started_at: str
    finished_at: str | None
    suite_path: str
    suite_hash: str
    benchmark_version: int
    backend: str
    provider: str
    models: Sequence[str]
    efforts: Sequence[str]
    options: Mapping[str, Any]
    source_run: int | None
    levels: tuple[StoredLevel, ...] = field(default=(), repr=False)

    @property
    def repeats(self) -> int:
        """How many times each test ran (``--repeats``): the most of any level, 1 without repeats."""
        return max((level.repeats for level in self.levels), default=1)

    def level(self, key: str) -> StoredLevel | None:
        """The level ``model@effort`` of this run, or None."""
        return next((lv for lv in self.levels if lv.key == key), None)
