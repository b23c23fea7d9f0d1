"""The CI gate of a run: which measured models fall below a minimum tier at their recommended effort."""

from __future__ import annotations

from collections.abc import Sequence

from tsuka_core.engine.results import LevelResult
from tsuka_core.judge.scoring import tier_rank
from tsuka_core.terms import Tier

__all__ = ["below_tier"]


def below_tier(
    levels: Sequence[LevelResult], recommendations: dict[str, str], minimum: Tier, models: Sequence[str] = ()
) -> list[str]:
    """One line per model whose tier at its recommended effort is below ``minimum``.

    A model measured (it is in ``models`` or has a level) but without a
    recommendation, because no level of it could be stored, counts as below.
    """
    names = list(dict.fromkeys([*models, *(level.model for level in levels)]))
    problems: list[str] = []
    for model in names:
        effort = recommendations.get(model)
        level = next((lv for lv in levels if lv.model == model and lv.effort == effort), None)
        if level is None:
            problems.append(f"{model}: no level could be stored, so it has no tier (needs {minimum})")
        elif tier_rank(level.tier) < tier_rank(minimum):
            problems.append(f"{model}@{effort} is {level.tier}, below the minimum tier {minimum}")
    return problems
