"""The tool-count cap: the one rule that turns stored ``toolCountTolerance`` values into the most tools a model sees.

The rule (docs/gating.md, "The tool-count cap"), failing closed:

- the tolerance of ``model@effort`` is read from the tier profile used (when it
  holds the key) and from the ``toolcount`` suite's profile stored under the
  key ``model@effort``, whatever the state of the tier profile; the key alone
  says whose it is;
- a valid measurement (its profile valid, the value a whole number of at least
  1; ``8.0`` reads as 8) caps at that number, held to the largest count its
  ``toolCountScores`` measured;
- a value that is present but damaged, a profile whose own ``model`` or
  ``reasoningEffort`` contradicts its key, a tolerance without the counts it
  was measured at, a stale profile, a ``toolcount`` profile without a value, or
  a tolerance measured only at another effort than the one asked caps at
  :data:`SAFE_TOOL_COUNT` and says why;
- of several, the smallest cap holds; with none of these, there is no cap.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tsuka_core.storage.profile import Profile
from tsuka_core.storage.store import StoreData, profile_key
from tsuka_core.suite.identity import SuiteHashes
from tsuka_core.terms import Effort

__all__ = [
    "NO_CAP",
    "SAFE_TOOL_COUNT",
    "TOLERANCE",
    "TOOLCOUNT_SUITE",
    "ToolCap",
    "cap_note",
    "largest_count",
    "tolerance_value",
    "tool_cap",
]

TOOLCOUNT_SUITE = "toolcount"
"""The suite whose profiles hold a model's ``toolCountTolerance`` beside its tier from another suite."""
TOLERANCE = "toolCountTolerance"
"""The stored field."""
SCORES = "toolCountScores"
"""The tool score at each count measured: the tolerance is held to its largest count."""
SAFE_TOOL_COUNT = 1
"""The cap when a tolerance cannot be trusted: the smallest count a suite measures (a tolerance is only
ever measured against the same tasks offered with one tool, ``engine.toolcount``)."""

SuiteHash = str | Callable[[str | None], str]
"""The hash a profile must carry, or a function giving it for the suite the profile names."""


@dataclass(frozen=True)
class ToolCap:
    """The most tools a model may be offered (None: no cap) and, when the safe side was taken, why."""

    limit: int | None
    reason: str | None = None
    """Why the cap is the safe side (damaged, stale, another effort); None for a valid measurement or no cap."""
    source: str | None = None
    """Which profile the cap comes from, e.g. ``toolcount profile m@none``."""

    @property
    def safe_side(self) -> bool:
        """True when the cap was narrowed to :data:`SAFE_TOOL_COUNT` because the stored value cannot be used."""
        return self.reason is not None


NO_CAP = ToolCap(None)
"""No tolerance stored anywhere for the level: gated by tier alone."""


def tolerance_value(value: object) -> int | None:
    """A stored tolerance as a count: a whole number of at least 1 (``8`` or ``8.0``); None for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        return None
    return int(value) if value >= 1 else None


def tool_cap(data: StoreData, model: str, effort: Effort | None, suite_hash: SuiteHash) -> ToolCap:
    """The cap on the tools of ``model`` at ``effort`` by the rule above; ``data`` is the tier suite's view."""
    found = (_from_tier_profile(data, model, effort, suite_hash), _from_toolcount(data, model, effort))
    caps = [cap for cap in found if cap is not None]
    if not caps:
        return NO_CAP
    return min(caps, key=lambda cap: (cap.limit, cap.reason is None))


def _from_tier_profile(data: StoreData, model: str, effort: Effort | None, suite_hash: SuiteHash) -> ToolCap | None:
    if effort is None or data.suite == TOOLCOUNT_SUITE:
        return None  # the toolcount suite's own profiles are read by _from_toolcount
    key = profile_key(model, effort)
    profile = data.profiles.get(key)
    if profile is None or not profile.has(TOLERANCE):
        return None
    return _judged(key, profile, f"profile {key}", suite_hash)


def _from_toolcount(data: StoreData, model: str, effort: Effort | None) -> ToolCap | None:
    view = data.for_suite(TOOLCOUNT_SUITE).profiles
    measured = {key: profile for key, profile in view.items() if key.rpartition("@")[0] == model}
    if not measured:
        return None
    key = None if effort is None else profile_key(model, effort)
    if key is None or key not in measured:
        levels = ", ".join(sorted(k.rpartition("@")[2] for k in measured))
        asked = "no effort was given or recommended" if key is None else f"{key} was asked"
        why = f"{TOLERANCE} measured with the toolcount suite at {levels} only; {asked}"
        return ToolCap(SAFE_TOOL_COUNT, why, f"toolcount profiles of {model}")
    # Judged against the suite it names (the toolcount suite as installed), whatever suite the tiers come from.
    return _judged(key, measured[key], f"toolcount profile {key}", SuiteHashes())


def _judged(key: str, profile: Profile, source: str, suite_hash: SuiteHash) -> ToolCap:
    """The cap the profile stored under ``key`` gives: its tolerance when valid, else the safe side and why."""
    wanted = suite_hash if isinstance(suite_hash, str) else suite_hash(profile.suite)
    valid, status = profile.status(wanted)
    if not valid:
        return ToolCap(SAFE_TOOL_COUNT, f"{source} is {_reason(status)}", source)
    mislabelled = profile.mislabelled(key)
    if mislabelled is not None:
        return ToolCap(SAFE_TOOL_COUNT, f"{source} {mislabelled}", source)
    found = profile.found(TOLERANCE)
    limit = tolerance_value(found)
    if limit is None:
        shown = "missing" if not profile.has(TOLERANCE) else _shown(found)
        return ToolCap(SAFE_TOOL_COUNT, f"{source} holds {TOLERANCE} {shown}, not a whole number of at least 1", source)
    largest = largest_count(profile)
    if largest is None:
        why = f"{source} holds {TOLERANCE} {limit} without the {SCORES} it was measured from"
        return ToolCap(SAFE_TOOL_COUNT, why, source)
    if limit > largest:
        why = f"{source} holds {TOLERANCE} {limit}, more than the {largest} tools it measured"
        return ToolCap(largest, why, source)
    return ToolCap(limit, None, source)


def largest_count(profile: Profile) -> int | None:
    """The largest tool count the profile's ``toolCountScores`` measured; None when it holds none."""
    return max(profile.tool_scores_by_count, default=None)


def _reason(status: str) -> str:
    return status if status.startswith("stale") else f"unusable ({status})"


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def cap_note(cap: ToolCap, subject: str, hidden: int) -> str:
    """The line a caller is told about ``cap``, a cap with a limit, for ``subject``."""
    if cap.reason is not None:
        return (
            f"{subject} keeps at most {cap.limit} tool(s), the safe side: {cap.reason}; "
            f"{hidden} hidden for it (measure it again with --suite toolcount)"
        )
    return f"{subject} keeps at most {cap.limit} tools (its {TOLERANCE}): {hidden} hidden in all"
