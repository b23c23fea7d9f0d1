"""How sure a level's scores and tier are: a seeded bootstrap over its tests (and their repeated runs).

Each resample draws, within each category, as many tests as the category has,
with replacement; a drawn test run several times counts with the mean of its
runs, themselves drawn with replacement. The resample's category scores and
tier are computed as the measured ones are. Same results, same seed: same
intervals and confidence.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from tsuka_core.engine.results import BORDERLINE, Confidence, LevelResult, Tries
from tsuka_core.judge.scoring import category_score, mean_score, round_half_up, tier_for
from tsuka_core.terms import CATEGORIES, Category, Tier

__all__ = [
    "BORDERLINE",
    "RESAMPLES",
    "SEED",
    "Confidence",
    "Tries",
    "bootstrap",
    "interval",
    "level_confidence",
    "redrawn",
    "with_confidence",
]

RESAMPLES = 1000
"""How many resamples the bootstrap draws."""

SEED = 20250101
"""The fixed seed, so the same results always give the same intervals."""


@dataclass(frozen=True)
class _Category:
    """One category's tests ready to be resampled: each test's own score and, for tests run once, weight × score."""

    tests: Sequence[Tries]
    points: Sequence[float]
    weights: list[float]
    weighted: list[float]
    once: bool
    """Every test ran once: a resample's score is a sum over drawn indices, no test redrawn."""

    @classmethod
    def of(cls, tests: Sequence[Tries], points: Sequence[float]) -> _Category:
        weights = [float(s.weight) for s in tests]
        weighted = [w * p for w, p in zip(weights, points, strict=True)]
        return cls(tests, points, weights, weighted, all(len(s.scores) == 1 for s in tests))


def _resample_score(rng: random.Random, category: _Category) -> float:
    """One resampled category score: tests drawn with replacement, each counting the mean of redrawn runs.

    A test run once counts its own score (redrawing one run changes nothing). When
    every test ran once, the weighted mean is summed straight from the drawn
    indices: the same draws, products and order of addition as
    :func:`~tsuka_core.judge.scoring.category_score`, so the same score.
    """
    tests, points = category.tests, category.points
    drawn = rng.choices(range(len(tests)), k=len(tests))
    if category.once:
        total = sum(map(category.weights.__getitem__, drawn))
        return round_half_up(sum(map(category.weighted.__getitem__, drawn)) / total) if total > 0 else 0.0
    return category_score([(tests[i].weight, redrawn(rng, tests[i].scores, points[i])) for i in drawn])


def redrawn(rng: random.Random, runs: tuple[float, ...], point: float) -> float:
    """A test's score in one resample: the mean of its runs redrawn with replacement; a single run keeps ``point``."""
    return mean_score(rng.choices(runs, k=len(runs))) if len(runs) > 1 else point


def interval(values: Sequence[float], point: float) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles of ``values``, widened to hold the measured ``point`` (alone without values)."""
    if len(set(values)) <= 1:
        low = high = values[0] if values else point
    else:
        cuts = statistics.quantiles(values, n=40, method="inclusive")
        low, high = cuts[0], cuts[-1]
    return round_half_up(min(low, point)), round_half_up(max(high, point))


def bootstrap(samples: Sequence[Tries], tier: Tier, resamples: int = RESAMPLES, seed: int = SEED) -> Confidence:
    """The intervals of the category scores of ``samples`` and the confidence of the measured ``tier``."""
    rng = random.Random(seed)
    samples = [replace(s, scores=tuple(sorted(s.scores))) for s in samples]  # run order must not matter
    by_category = {c: [s for s in samples if s.category == c] for c in CATEGORIES}
    test_points = {c: [mean_score(s.scores) for s in tests] for c, tests in by_category.items()}
    points = {
        c: category_score([(s.weight, p) for s, p in zip(tests, test_points[c], strict=True)])
        for c, tests in by_category.items()
    }
    prepared = {c: _Category.of(tests, test_points[c]) for c, tests in by_category.items()}
    drawn: dict[Category, list[float]] = {c: [] for c in CATEGORIES}
    same = 0
    for _ in range(resamples):
        scores = {c: _resample_score(rng, prepared[c]) if tests else 0.0 for c, tests in by_category.items()}
        for c in CATEGORIES:
            drawn[c].append(scores[c])
        same += tier_for(scores) == tier
    intervals = {c: interval(drawn[c], points[c]) for c in CATEGORIES}
    return Confidence(intervals, round_half_up(same / resamples) if resamples else 0.0)


def level_confidence(level: LevelResult) -> Confidence:
    """The bootstrap of a level's tests (every run of each), for its measured tier: the one the level carries, if any.

    The sweep sets it once on each level it hands over, so the profile and the summary share it.
    """
    if level.confidence is not None:
        return level.confidence
    return bootstrap([t.tries for t in level.per_test], level.tier)


def with_confidence(levels: Sequence[LevelResult]) -> list[LevelResult]:
    """``levels``, each complete one carrying its :func:`level_confidence` (only those have a profile to show it)."""
    return [replace(level, confidence=level_confidence(level)) if level.complete else level for level in levels]
