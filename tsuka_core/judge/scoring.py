"""Scores and tiers: test score, category score, tier, with half-up rounding to two decimals."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal

from tsuka_core.terms import CATEGORIES, TIERS, Category, Tier

__all__ = [
    "category_score",
    "mean_score",
    "round_half_up",
    "score_checks",
    "score_spread",
    "tier_for",
    "tier_rank",
]


def round_half_up(value: float, places: int = 2) -> float:
    """Round half up on the decimal value (0.125 gives 0.13), ignoring float noise past 9 places.

    Infinity and NaN come back as they are (no rounding makes them numbers), and so does a value too large to
    hold nine decimal places: rounding never raises.
    """
    if not math.isfinite(value) or abs(value) >= 1e15:
        return float(value)
    cleaned = Decimal(repr(value)).quantize(Decimal("1e-9"))
    return float(cleaned.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


def score_checks(results: Iterable[tuple[float, bool]]) -> float:
    """Weights of passed checks over weights of all checks, from ``(weight, passed)`` pairs."""
    pairs = list(results)
    total = sum(weight for weight, _ in pairs)
    if total <= 0:
        return 0.0
    return round_half_up(sum(weight for weight, ok in pairs if ok) / total)


def mean_score(runs: Sequence[float]) -> float:
    """The score of a test run several times: the mean of its runs' scores, rounded half-up; 0 without runs."""
    return round_half_up(sum(runs) / len(runs)) if runs else 0.0


def score_spread(runs: Sequence[float]) -> float:
    """How far a repeated test's scores vary: their population standard deviation, rounded half-up; 0 for one run."""
    if len(runs) < 2:
        return 0.0
    mean = sum(runs) / len(runs)
    return round_half_up(math.sqrt(sum((r - mean) ** 2 for r in runs) / len(runs)))


def category_score(scores: Sequence[tuple[float, float]]) -> float:
    """Weight-weighted mean of ``(weight, rounded test score)`` pairs; 0 without tests."""
    total = sum(weight for weight, _ in scores)
    if total <= 0:
        return 0.0
    return round_half_up(sum(weight * score for weight, score in scores) / total)


def tier_for(scores: Mapping[Category, float]) -> Tier:
    """The tier earned by rounded category scores (bounds inclusive)."""
    tools, instruction, json_ = (scores.get(c, 0.0) for c in ("toolCalling", "instruction", "json"))
    if tools >= 0.9 and instruction >= 0.85 and json_ >= 0.85:
        return "large"
    if tools >= 0.6 and json_ >= 0.5:
        return "medium"
    return "small"


def tier_rank(tier: str) -> int:
    """0 for small, 1 for medium, 2 for large; an unknown tier ranks as small."""
    return TIERS.index(tier) if tier in TIERS else 0


def all_categories(scores: Mapping[Category, float]) -> dict[Category, float]:
    """Scores for all three categories, 0 where missing, in report order."""
    return {c: scores.get(c, 0.0) for c in CATEGORIES}
