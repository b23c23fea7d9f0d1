"""How sure a recorded level is, recomputed from its stored per-test scores: the profile's bootstrap, and pass^k.

The run history keeps every run's score but not the intervals; the bootstrap
(:mod:`tsuka_core.engine.confidence`) is seeded and sees the tests in the
same order, so a recorded level gets the very intervals and tier confidence
its profile was stored with.
"""

from __future__ import annotations

import math

from tsuka_core.engine.confidence import Confidence, Sample, bootstrap
from tsuka_core.engine.reliability import Reliability, Tries, reliability
from tsuka_core.storage.history_query import StoredLevel, group_tests
from tsuka_core.terms import CATEGORIES, TIERS

__all__ = ["recorded_confidence", "recorded_reliability"]


def recorded_confidence(level: StoredLevel) -> Confidence | None:
    """The intervals and tier confidence of ``level``; None for a level with errored tests or no known tier."""
    tier = next((t for t in TIERS if t == level.tier), None)
    if not level.complete or tier is None or not level.tests:
        return None
    samples = [
        Sample(category, group.first.weight, tuple(group.scores))
        for group in group_tests(level.tests)
        for category in CATEGORIES
        if category == group.first.category
    ]
    if not all(math.isfinite(n) for s in samples for n in (s.weight, *s.runs)):
        return None  # not what a run records: no interval rather than a made-up one
    return bootstrap(samples, tier)


def recorded_reliability(level: StoredLevel) -> Reliability | None:
    """pass^k per category and the flaky tests of a recorded level; None unless every test ran at least twice."""
    return reliability([Tries(g.name, g.first.category, g.first.weight, tuple(g.scores)) for g in level.per_test])
