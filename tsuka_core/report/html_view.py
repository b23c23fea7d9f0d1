"""What the HTML report's templates show, gathered from a recorded run: each model's levels, tests and run grids.

Nothing here writes HTML: the values are plain data and text, and the
templates (``templates/*.html``) escape every one of them as they place it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tsuka_core.engine.answer_faults import faults_line
from tsuka_core.engine.confidence import BORDERLINE, Confidence
from tsuka_core.engine.reliability import Reliability, stored_reliability
from tsuka_core.engine.speed_figures import figures_line
from tsuka_core.report.figures import Figure, effort_labels, figures, pct
from tsuka_core.storage.history_query import (
    StoredCheck,
    StoredLevel,
    StoredRun,
    StoredTest,
    StoredTestRuns,
    group_tests,
)
from tsuka_core.storage.profile_confidence import borderline_advice, stored_confidence
from tsuka_core.terms import EFFORTS

__all__ = [
    "GridCell",
    "GridRow",
    "ModelView",
    "TestRow",
    "efforts_of",
    "level_confidence",
    "models_of",
    "run_grid",
    "run_scores",
    "run_shown",
    "score_class",
    "shown",
]


def score_class(score: float, status: str = "ok") -> str:
    """The colour class of a score: ``good``, ``mid``, ``bad``, or ``err`` when it could not be measured."""
    if status != "ok":
        return "err"
    return "good" if score >= 0.995 else "mid" if score >= 0.5 else "bad"


def run_shown(test: StoredTest) -> str:
    """One run's score as shown: a percentage, or ``error``."""
    return pct(test.score) if test.status == "ok" else "error"


def shown(group: StoredTestRuns) -> str:
    """A test's score as shown: a percentage, ``mean ± spread`` with repeats, or ``error``."""
    if all(t.status != "ok" for t in group.runs):
        return "error"
    if group.repeated:
        return f"{pct(group.score)} ± {pct(group.spread)}"
    return pct(group.score)


def run_scores(group: StoredTestRuns) -> str:
    """Each run's score in run order, for a tooltip: ``runs: 100%, 0%, error``."""
    return "runs: " + ", ".join(run_shown(t) for t in group.runs)


@dataclass(frozen=True)
class TestRow:
    """One test of a model: its name, category, and its runs at each level (None where it did not run)."""

    name: str
    category: str
    cells: tuple[tuple[StoredLevel, StoredTestRuns | None], ...]

    @property
    def found(self) -> list[tuple[StoredLevel, StoredTestRuns]]:
        """The levels at which the test ran, with its runs there."""
        return [(level, group) for level, group in self.cells if group is not None]


@dataclass(frozen=True)
class ModelView:
    """One model's section: its levels in effort order, recommendation, notes, charts and tests."""

    name: str
    levels: tuple[StoredLevel, ...]
    figures: list[Figure]
    tests: list[TestRow]
    confidences: tuple[Confidence | None, ...] = ()
    """Each level's intervals and tier confidence, None where it has none (a level with errored tests)."""

    def reliability(self, level: StoredLevel) -> Reliability | None:
        """pass^k per category and the flaky tests of ``level``; None unless every test ran at least twice."""
        return stored_reliability(level.record)

    @property
    def repeated(self) -> bool:
        """Whether some level ran every test at least twice (it then has a reliability table)."""
        return any(self.reliability(level) is not None for level in self.levels)

    @property
    def best(self) -> StoredLevel | None:
        """The recommended level, if any level could be stored."""
        return next((lv for lv in self.levels if lv.recommended), None)

    @property
    def notes(self) -> list[str]:
        """Every level's notes, each once, in order."""
        return list(dict.fromkeys(n for lv in self.levels for n in lv.notes))

    @property
    def labels(self) -> list[str]:
        """Each level's effort as a column heading."""
        return effort_labels(self.levels)

    def at(self, effort: str) -> StoredLevel | None:
        """The level measured at ``effort``, if there is one."""
        return next((lv for lv in self.levels if lv.effort == effort), None)

    def sure(self, level: StoredLevel) -> Confidence | None:
        """How sure the scores and tier of ``level`` (one of this model's) are; None when unknown."""
        found = [c for lv, c in zip(self.levels, self.confidences, strict=False) if lv is level]
        return found[0] if found else None

    def speed(self, level: StoredLevel) -> str:
        """The level's speed figures at p50/p95, and what they include; empty when none were measured."""
        return figures_line(level.record.speed_figures) or ""

    def failures(self, level: StoredLevel) -> str:
        """How many failed answers of ``level`` were of each failure kind (``2 malformed call``); empty: none."""
        return faults_line(level.record.answer_faults or {})

    @property
    def borderline(self) -> list[StoredLevel]:
        """The levels whose tier is borderline."""
        return [lv for lv, c in zip(self.levels, self.confidences, strict=False) if c is not None and c.borderline]

    @property
    def advice(self) -> str:
        """What a borderline level needs, naming each; empty when no level is borderline."""
        levels = self.borderline
        if not levels:
            return ""
        efforts = ", ".join(lv.effort for lv in levels)
        advice = borderline_advice(max(lv.repeats for lv in levels))
        return f"Borderline tier at effort {efforts} (tier confidence under {BORDERLINE}): {advice}."


def level_confidence(level: StoredLevel) -> Confidence | None:
    """The intervals and tier confidence the level's record holds; None for a level with errored tests, or whose
    record has none (one of an older layout)."""
    return stored_confidence(level.record).whole if level.complete else None


def _effort_order(level: StoredLevel) -> int:
    return EFFORTS.index(level.effort) if level.effort in EFFORTS else len(EFFORTS)


def _test_rows(levels: Sequence[StoredLevel]) -> list[TestRow]:
    at_level = [{group.first.name: group for group in group_tests(lv.tests)} for lv in levels]
    names = list(dict.fromkeys(name for tests in at_level for name in tests))
    rows = []
    for name in names:
        first = next(tests[name].first for tests in at_level if name in tests)
        cells = tuple((lv, tests.get(name)) for lv, tests in zip(levels, at_level, strict=True))
        rows.append(TestRow(name, first.category, cells))
    return rows


def models_of(run: StoredRun) -> list[ModelView]:
    """Each model of ``run`` (named as stored) in the order it was measured, its levels sorted by effort."""
    by_model: dict[str, list[StoredLevel]] = {}
    for level in run.levels:
        by_model.setdefault(level.name or level.model, []).append(level)
    views = []
    for model, found in by_model.items():
        levels = tuple(sorted(found, key=_effort_order))
        sure = tuple(level_confidence(lv) for lv in levels)
        views.append(ModelView(model, levels, figures(levels, sure), _test_rows(levels), sure))
    return views


def efforts_of(models: Sequence[ModelView]) -> list[str]:
    """The efforts any model was measured at, in effort order."""
    return [x for x in EFFORTS if any(m.at(x) is not None for m in models)]


@dataclass(frozen=True)
class GridCell:
    """One check's outcome in one run, with its detail as a tooltip."""

    status: str
    tip: str


@dataclass(frozen=True)
class GridRow:
    """One check of a repeated test and its outcome in each run (None where that run did not reach it)."""

    check: StoredCheck
    cells: list[GridCell | None]


def _cells(test: StoredTest) -> dict[tuple[str, str], tuple[StoredCheck, GridCell]]:
    """Each check of one run by where it is and its type, with its outcome as a grid cell."""
    return {
        (c.location, c.type): (c, GridCell(c.status, c.detail if step.sent else f"not sent — {c.detail}"))
        for step in test.steps
        for c in step.checks
    }


def run_grid(group: StoredTestRuns) -> list[GridRow]:
    """Every check of a repeated test (rows, in first-seen order) against every run (columns)."""
    runs = [_cells(t) for t in group.runs]
    rows = []
    for key in dict.fromkeys(key for run in runs for key in run):
        check = next(run[key][0] for run in runs if key in run)
        rows.append(GridRow(check, [run[key][1] if key in run else None for run in runs]))
    return rows
