"""The confidence a stored profile claims (``tierConfidence`` and ``intervals``), read without trusting the store.

A profile written by an older version or by the TypeScript TSUKA has neither
field: it shows no confidence and is never borderline. A field that is there
but malformed (not a number from 0 to 1, not a pair ``[lo, hi]`` with
``lo <= hi``) is unknown: shown as such, never borderline, never an error.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from tsuka_core.engine.confidence import BORDERLINE
from tsuka_core.terms import CATEGORIES, Category

__all__ = ["ABSENT", "UNKNOWN", "Missing", "StoredConfidence", "borderline_advice", "stored_confidence"]


class Missing(Enum):
    """Why a profile gives no value: it lacks the field, or holds one that cannot be believed."""

    ABSENT = "absent"
    UNKNOWN = "unknown"


ABSENT = Missing.ABSENT
"""The profile has no such field."""
UNKNOWN = Missing.UNKNOWN
"""The profile has the field, but not in a form that can be believed."""


@dataclass(frozen=True)
class StoredConfidence:
    """A profile's tier confidence and each category's 95% interval, each a value, ABSENT or UNKNOWN."""

    tier_confidence: float | Missing
    intervals: Mapping[Category, tuple[float, float] | Missing]

    @property
    def borderline(self) -> bool:
        """Whether the profile states a tier confidence under :data:`BORDERLINE` (unknown is not borderline)."""
        return isinstance(self.tier_confidence, float) and self.tier_confidence < BORDERLINE


def _share(value: object) -> float | None:
    """``value`` as a number from 0 to 1, or None (booleans, strings, NaN, infinities, out of range)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and 0.0 <= number <= 1.0 else None


def _pair(value: object) -> tuple[float, float] | Missing:
    if not isinstance(value, list | tuple) or len(value) != 2:
        return UNKNOWN
    low, high = _share(value[0]), _share(value[1])
    if low is None or high is None or low > high:
        return UNKNOWN
    return low, high


def _intervals(value: object) -> dict[Category, tuple[float, float] | Missing]:
    if value is None:
        return dict.fromkeys(CATEGORIES, ABSENT)
    if not isinstance(value, Mapping):
        return dict.fromkeys(CATEGORIES, UNKNOWN)
    return {c: _pair(value[c]) if c in value else ABSENT for c in CATEGORIES}


def stored_confidence(profile: object) -> StoredConfidence:
    """What ``profile`` (any JSON value from the store) says of its tier confidence and intervals."""
    if not isinstance(profile, Mapping):
        return StoredConfidence(ABSENT, dict.fromkeys(CATEGORIES, ABSENT))
    if "tierConfidence" in profile:
        share = _share(profile["tierConfidence"])
        confidence: float | Missing = UNKNOWN if share is None else share
    else:
        confidence = ABSENT
    return StoredConfidence(confidence, _intervals(profile.get("intervals")))


def borderline_advice(repeats: int) -> str:
    """What makes a borderline tier surer, for a level whose tests ran ``repeats`` times each."""
    return "add --repeats or use the extended suite" if repeats == 1 else "add more --repeats or use the extended suite"
