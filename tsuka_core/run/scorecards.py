"""Scorecard tables from the store: each registered scorecard's figures for one model at one effort, combined."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tsuka_core.judge.scorecard import Scorecard, ScoreRow
from tsuka_core.plugins.registry import Registry
from tsuka_core.record.figures import Figure
from tsuka_core.storage.store import StoreData
from tsuka_core.suite.identity import SuiteHashes

__all__ = ["ScorecardTable", "scorecard_tables"]


@dataclass(frozen=True)
class ScorecardTable:
    """One scorecard's table for ``model@effort``, and the suites its figures came from."""

    scorecard: Scorecard
    key: str
    rows: list[ScoreRow]
    suites: list[str]


def scorecard_tables(
    data: StoreData, registry: Registry, model: str, effort: str, only: str | None = None
) -> list[ScorecardTable]:
    """Every scorecard with a valid profile of ``model@effort`` in one of its suites (``only``: that one's).

    A suite's figures count only from a profile valid for the suite as installed (a stale one is left out,
    so its categories show as not measured).
    """
    hashes = SuiteHashes()
    tables = []
    for name, entry in sorted(registry.scorecards.items()):
        scorecard = entry.cls()
        if only is not None and name != only:
            continue
        measured: dict[str, Mapping[str, Figure]] = {}
        for suite in registry.suites:
            if not scorecard.knows(suite):
                continue
            profile = data.for_suite(suite).profile(model, effort)
            if profile is None or not profile.status(hashes(suite))[0] or profile.scorecard is None:
                continue
            if profile.scorecard.name == scorecard.name and profile.scorecard.figures:
                measured[suite] = profile.scorecard.figures
        if measured:
            tables.append(ScorecardTable(scorecard, f"{model}@{effort}", scorecard.rows(measured), sorted(measured)))
    return tables
