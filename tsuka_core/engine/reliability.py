"""pass^k over repeats: the chance a model passes a test on every one of k fresh tries (tau-bench's estimator).

A test that ran ``n`` times and passed ``c`` of them (a run passes when its
score is 1) has pass^k = C(c, k) / C(n, k): the share of the ways to pick k of
its n runs in which all k passed. This is unbiased for the chance that k new,
independent tries all pass. A category's pass^k is the weighted mean of its
tests' (weights as in the category score); ``docs/reliability.md`` works an
example through.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from math import comb
from typing import Any

from tsuka_core.engine.results import PASSED, RepeatedTest, Tries
from tsuka_core.record.level import LevelRecord
from tsuka_core.terms import CATEGORIES

__all__ = [
    "PASSED",
    "Reliability",
    "Tries",
    "pass_hat_k",
    "reliability",
    "reliability_fields",
    "stored_reliability",
    "tries_of",
]


def pass_hat_k(passed: int, runs: int, k: int) -> float:
    """C(passed, k) / C(runs, k): the unbiased estimate that k fresh tries all pass (1 <= k <= runs)."""
    if not 1 <= k <= runs or not 0 <= passed <= runs:
        raise ValueError(
            f"pass^k needs 1 <= k <= runs and 0 <= passed <= runs, not k={k}, passed={passed}, runs={runs}"
        )
    return comb(passed, k) / comb(runs, k)


@dataclass(frozen=True)
class Reliability:
    """pass^1 .. pass^n of each category measured, and the tests that passed some runs and failed others."""

    runs: int
    """n: how many runs each test had (the fewest any test had)."""
    by_category: Mapping[str, tuple[float, ...]]
    """pass^k for k = 1..n, per category with tests."""
    flaky: tuple[str, ...] = ()

    def at(self, category: str, k: int) -> float | None:
        """pass^k of ``category``; None when it has no tests or k is out of 1..n."""
        values = self.by_category.get(category, ())
        return values[k - 1] if 1 <= k <= len(values) else None

    def as_profile(self) -> dict[str, Any]:
        """The profile fields: ``passHatK`` (a list per category, k = 1..n) and ``flakyTests``."""
        return {"passHatK": {c: list(v) for c, v in self.by_category.items()}, "flakyTests": list(self.flaky)}


def reliability(tests: Sequence[Tries]) -> Reliability | None:
    """pass^k per category of ``tests``; None when any test ran fewer than twice (there is nothing to estimate)."""
    if not tests:
        return None
    runs = min(len(t.scores) for t in tests)
    if runs < 2:
        return None
    by_category: dict[str, tuple[float, ...]] = {}
    for category in _categories(t.category for t in tests):
        members = [t for t in tests if t.category == category]
        by_category[category] = tuple(_weighted(members, runs, k) for k in range(1, runs + 1))
    return Reliability(runs, by_category, tuple(t.name for t in tests if t.flaky))


def tries_of(groups: Iterable[RepeatedTest]) -> list[Tries]:
    """Each repeated test of a level as :class:`Tries`."""
    return [g.tries for g in groups]


def reliability_fields(groups: Sequence[RepeatedTest]) -> dict[str, Any]:
    """``passHatK`` and ``flakyTests`` of a level whose tests ran at least twice; empty otherwise."""
    found = reliability(tries_of(groups))
    return found.as_profile() if found is not None else {}


def _categories(found: Iterable[str]) -> list[str]:
    """The categories seen, the contract's three first in their order, then any other in the order met."""
    seen = list(dict.fromkeys(found))
    return [c for c in CATEGORIES if c in seen] + [c for c in seen if c not in CATEGORIES]


def _weighted(tests: Sequence[Tries], runs: int, k: int) -> float:
    """The weighted mean of each test's pass^k, its first ``runs`` runs counted; 0 when the weights sum to 0."""
    total = sum(t.weight for t in tests)
    if total <= 0:
        return 0.0
    estimates = (t.weight * pass_hat_k(sum(1 for s in t.scores[:runs] if s >= PASSED), runs, k) for t in tests)
    return sum(estimates) / total


def stored_reliability(record: LevelRecord | object) -> Reliability | None:
    """The ``passHatK`` and ``flakyTests`` a level's record holds; None when absent or not of the expected shape.

    ``record`` is a :class:`~tsuka_core.record.LevelRecord`, or any JSON value from a store (read as one).
    """
    found = record if isinstance(record, LevelRecord) else LevelRecord.parse(record)
    table = found.pass_hat_k
    if not table or "flakyTests" in found.damaged:
        return None
    lengths = {len(values) for values in table.values()}
    if len(lengths) != 1 or min(lengths) < 2:
        return None
    by_category = {category: tuple(float(v) for v in values) for category, values in table.items()}
    return Reliability(lengths.pop(), by_category, tuple(found.flaky_tests or ()))
