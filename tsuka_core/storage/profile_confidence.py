"""The confidence a stored profile claims (``tierConfidence`` and ``intervals``), read without trusting the store.

A profile written by an older version or by the TypeScript TSUKA has neither
field: it shows no confidence and is never borderline. A field that is there
but malformed (not a number from 0 to 1, not a pair ``[lo, hi]`` with
``lo <= hi``) is unknown: shown as such, never borderline, never an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from tsuka_core.engine.results import BORDERLINE, Confidence
from tsuka_core.storage.profile import Profile
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

    @property
    def whole(self) -> Confidence | None:
        """As a :class:`~tsuka_core.engine.results.Confidence` when the tier confidence and every category's
        interval are there, else None (a level of an older layout, an unmeasured one, or a damaged record)."""
        intervals = {c: i for c, i in self.intervals.items() if isinstance(i, tuple)}
        if not isinstance(self.tier_confidence, float) or len(intervals) != len(CATEGORIES):
            return None
        return Confidence(intervals, self.tier_confidence)


def stored_confidence(profile: Profile | object) -> StoredConfidence:
    """What ``profile`` (parsed, or any JSON value from the store) says of its tier confidence and intervals."""
    found = profile if isinstance(profile, Profile) else Profile.parse(profile)
    if found.tier_confidence is not None:
        confidence: float | Missing = float(found.tier_confidence)
    else:
        confidence = UNKNOWN if found.has("tierConfidence") else ABSENT
    return StoredConfidence(confidence, _intervals(found))


def _intervals(profile: Profile) -> dict[Category, tuple[float, float] | Missing]:
    """Each category's interval: ABSENT without ``intervals`` (or with null), UNKNOWN when malformed."""
    if "intervals" in profile.damaged:
        return dict.fromkeys(CATEGORIES, UNKNOWN)
    stored = profile.intervals
    if stored is None:
        return dict.fromkeys(CATEGORIES, ABSENT)
    return {c: ABSENT if c not in stored else (stored[c] or UNKNOWN) for c in CATEGORIES}


def borderline_advice(repeats: int) -> str:
    """What makes a borderline tier surer, for a level whose tests ran ``repeats`` times each."""
    return "add --repeats or use the extended suite" if repeats == 1 else "add more --repeats or use the extended suite"
