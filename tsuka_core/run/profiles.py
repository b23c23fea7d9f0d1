"""A measured level as the profile the store keeps, and the effort recommended from a sweep's levels."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tsuka_core.engine.confidence import level_confidence
from tsuka_core.engine.results import LevelResult
from tsuka_core.judge.scoring import all_categories, tier_rank
from tsuka_core.storage.store import BENCHMARK_VERSION, profile_key
from tsuka_core.suite.identity import suite_label
from tsuka_core.terms import EFFORTS, Effort
from tsuka_core.timestamps import format_tested_at

__all__ = ["profile_from_level", "recommend"]


def profile_from_level(level: LevelResult, tested_at: datetime | None = None) -> dict[str, Any]:
    """The stored profile of a complete level: TSUKA's fields in order, then this engine's own.

    Raises ValueError for a level with errored tests (such a level is never stored). ``level.extra`` keys
    named like a profile field are kept apart, under :data:`APART`.
    """
    if not level.complete:
        raise ValueError(f"{profile_key(level.model, level.effort)} is incomplete and cannot be stored")
    profile: dict[str, Any] = {
        "model": level.model,
        "provider": level.provider or level.backend,
        "tier": level.tier,
        "scores": dict(all_categories(level.scores)),
        "tokensPerSecond": level.tokens_per_second,
        "testedAt": format_tested_at(tested_at or datetime.now(UTC)),
        "benchmarkVersion": BENCHMARK_VERSION,
        "testsHash": level.suite_hash,
        "testResults": _test_results(level),
        "reasoningEffort": level.effort,
        "avgCompletionTokens": level.avg_completion_tokens,
    }
    profile.update(_engine_fields(level))
    clashing = {k: v for k, v in level.extra.items() if k in profile or k == APART}
    profile.update({k: v for k, v in level.extra.items() if k not in clashing})
    if clashing:  # a backend's (or a hand-edited history's) field named like one of the record's own: kept apart
        profile[APART] = clashing
    return profile


APART = "backendExtra"
"""Where a backend's extra fields that bear the name of a profile field are kept, never replacing it."""


def _test_results(level: LevelResult) -> list[dict[str, Any]]:
    """``{name, category, score}`` per test; with repeats, the mean score, its ``spread`` and each run's score."""
    entries: list[dict[str, Any]] = []
    for group in level.per_test:
        entry: dict[str, Any] = {"name": group.test.name, "category": group.test.category, "score": group.score}
        if level.repeats > 1:
            entry["spread"] = group.spread
            entry["runs"] = group.scores
        entries.append(entry)
    return entries


def _engine_fields(level: LevelResult) -> dict[str, Any]:
    fields: dict[str, Any] = {"backend": level.backend, "effortApplied": level.effort_applied}
    if level.suite_path:
        fields["suite"] = suite_label(Path(level.suite_path))
    if level.repeats > 1:
        fields["repeats"] = level.repeats
    if level.usage_estimated:
        fields["usageEstimated"] = True
    fields.update(level.measured)
    fields.update(level_confidence(level).as_profile())
    return fields


def recommend(levels: Sequence[LevelResult]) -> Effort | None:
    """The cheapest complete level of this sweep that reaches the highest tier observed; None without any."""
    complete = sorted((lv for lv in levels if lv.complete), key=lambda lv: EFFORTS.index(lv.effort))
    if not complete:
        return None
    best = max(tier_rank(lv.tier) for lv in complete)
    return next(lv.effort for lv in complete if tier_rank(lv.tier) == best)
