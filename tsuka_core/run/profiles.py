"""A measured level as the profile the store keeps, and the effort recommended from a sweep's levels."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tsuka_core.engine.record import APART, level_record, record_of
from tsuka_core.engine.results import LevelResult
from tsuka_core.judge.scoring import tier_rank
from tsuka_core.storage.store import profile_key
from tsuka_core.terms import EFFORTS, Effort

__all__ = ["APART", "profile_from_level", "recommend", "stored_profiles"]


def profile_from_level(level: LevelResult, tested_at: datetime | None = None) -> dict[str, Any]:
    """The stored profile of a complete level: its record (``engine.record``) as JSON, TSUKA's fields first.

    Raises ValueError for a level with errored tests (such a level is never stored).
    """
    if not level.complete:
        raise ValueError(f"{profile_key(level.model, level.effort)} is incomplete and cannot be stored")
    return (record_of(level) if tested_at is None else level_record(level, tested_at)).stored()


def stored_profiles(levels: Sequence[LevelResult], name: str) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """What a model's levels put in the store: each complete level's record by key, and the recommendation.

    ``name`` is the model's name in the store; a live run, a rescore and a merge all store through here, each
    level's own record (``engine.record.record_of``: its moment and its endpoint in it), the one the history
    keeps.
    """
    complete = [level for level in levels if level.complete]
    profiles = {profile_key(name, level.effort): record_of(level).stored() for level in complete}
    best = recommend(complete)
    return profiles, ({name: best} if best else {})


def recommend(levels: Sequence[LevelResult]) -> Effort | None:
    """The cheapest complete level of this sweep that reaches the highest tier observed; None without any."""
    complete = sorted((lv for lv in levels if lv.complete), key=lambda lv: EFFORTS.index(lv.effort))
    if not complete:
        return None
    best = max(tier_rank(lv.tier) for lv in complete)
    return next(lv.effort for lv in complete if tier_rank(lv.tier) == best)
