"""What a comparison can see: the smallest category drop the paired bootstrap could call beyond noise.

With ``n`` tests in a category run ``r`` times each, a category score moves
in steps of one run of one test, ``1/(n*r)``. Take the drop made of ``m``
failed runs on side B where side A passed everything (unequal weights aside).
A resampled difference is zero exactly when no failed run is drawn, and the
95% interval excludes zero only when fewer than 2.5% of resamples are zero.
A test with ``j`` of its ``r`` runs failed shows no failure in a redraw of its
runs with probability ``(1 - j/r)**r``, so a resample is zero with probability
``(mean over the n tests of that)**n``. Spreading the ``m`` failed runs evenly
over the tests makes that smallest, so the smallest ``m`` for which it falls
below 2.5% gives the smallest drop, ``m/(n*r)``, that can ever be beyond noise.
The resamples are a sample too, so "below 2.5%" is taken with three standard
errors of margin (:data:`LEVEL`), and the drop is rounded down to two places:
the bound errs towards calling a drop detectable, so a smaller drop of whole
runs is never beyond noise, whatever the answers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tsuka_core.engine.confidence import RESAMPLES

__all__ = ["LEVEL", "detectable_drop", "resolution_line", "spread", "zero_chance"]

LEVEL = 0.025 + 3 * math.sqrt(0.025 * 0.975 / RESAMPLES)
"""The share of resamples at zero above which the 95% interval (its upper 2.5%) surely still holds zero."""


def zero_chance(failed: list[int], runs: int) -> float:
    """The chance a resample shows no drop, when test ``i`` of the category has ``failed[i]`` of ``runs`` failed."""
    unseen = [(1 - j / runs) ** runs for j in failed]
    return (sum(unseen) / len(unseen)) ** len(unseen)


def spread(total: int, tests: int, runs: int) -> list[int]:
    """``total`` failed runs spread as evenly as possible over ``tests`` tests of ``runs`` runs each."""
    each, extra = divmod(total, tests)
    return [min(runs, each + (1 if i < extra else 0)) for i in range(tests)]


def detectable_drop(tests: int, runs: int) -> float | None:
    """The smallest category drop that could be beyond noise with ``tests`` tests run ``runs`` times; None: no test."""
    if tests <= 0:
        return None
    runs = max(1, runs)
    for failed in range(1, tests * runs + 1):
        if zero_chance(spread(failed, tests, runs), runs) < LEVEL:
            return math.floor(failed / (tests * runs) * 100 + 1e-9) / 100
    return 1.0


def resolution_line(categories: Sequence[tuple[str, int, int, float | None]]) -> str:
    """One sentence on what a level's comparison can see, from each ``(category, tests, runs, detectable drop)``."""
    seen = [(c, n, r, d) for c, n, r, d in categories if d is not None]
    if not seen:
        return "no category has a test on both sides: no category drop can be beyond noise"
    shapes = {(n, r) for _, n, r, _ in seen}
    smallest = min(d for *_, d in seen)
    if len(shapes) == 1 and len(seen) == len(categories):
        tests, runs = shapes.pop()
        return (
            f"with {tests} test{_s(tests)} per category and {runs} run{_s(runs)} each, "
            f"a category drop smaller than {smallest:.2f} is never beyond noise"
        )
    each = ", ".join(
        f"{c} {d:.2f} ({n} test{_s(n)} × {r} run{_s(r)})" if d is not None else f"{c} never (no test)"
        for c, n, r, d in categories
    )
    return f"a category drop smaller than {smallest:.2f} is never beyond noise: {each}"


def _s(count: int) -> str:
    return "" if count == 1 else "s"
