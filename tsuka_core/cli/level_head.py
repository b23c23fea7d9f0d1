"""The one terminal rendering of a level's record: tier, confidence, scores, speed, failure kinds, pass^k.

``tsuka run``, ``merge``, ``rescore`` and ``show`` all print a level's head from its
record (``record.LevelRecord``): a live level's as the engine built it, a recorded
one's as the history kept it. What follows the head (each test) is the caller's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rich.text import Text

from tsuka_core.cli.reliability_text import reliability_lines
from tsuka_core.engine.answer_faults import faults_line
from tsuka_core.engine.confidence import BORDERLINE, Confidence
from tsuka_core.engine.reliability import stored_reliability
from tsuka_core.engine.speed_figures import figures_line
from tsuka_core.record.level import LevelRecord
from tsuka_core.storage.profile_confidence import borderline_advice
from tsuka_core.terms import CATEGORIES, Category
from tsuka_core.textsafe import one_line

__all__ = [
    "TIER_STYLE",
    "HeadOf",
    "confidence_lines",
    "confidence_note",
    "level_head",
    "no_tier_reason",
    "percent",
    "record_confidence",
    "tier_text",
    "tolerance_line",
]

TIER_STYLE = {"small": "red", "medium": "yellow", "large": "green"}


@dataclass(frozen=True)
class HeadOf:
    """What the head says of a level beyond its record: its key, its tier as shown, and what it holds."""

    key: str
    tier: str
    """The tier, or ``unmeasured`` when no test was measured."""
    complete: bool
    """Every test measured: only then (and when ``tier`` is the record's) are confidence and intervals shown."""
    measured: bool
    """At least one test measured: else no scores and no speed."""
    recommended: bool = False
    """The effort recommended for the model (said after the tier)."""
    where: str = ""
    """Where the answers came from, at the end of the line (a project file's endpoint and its server)."""
    no_tier: str | None = None
    """Why the level gives no tier (a partial run, tests not measured, a suite without every category), or None."""


def no_tier_reason(complete: bool, partial: str | None, categories: Iterable[str]) -> str | None:
    """Why a level's tier would not mean what a tier means, or None when it does.

    A tier stands for the whole suite, every test measured, and every category scored: a run of part of the
    suite (``partial``: what picked it), a level with tests not measured, or a suite without tests of a
    category gives none (its profile, if stored, still counts as its stored tier, the safe side).
    """
    if partial:
        return f"a partial run ({partial}): a tier stands for the whole suite"
    if not complete:
        return "not every test was measured"
    present = [c for c in CATEGORIES if c in set(categories)]
    missing = [c for c in CATEGORIES if c not in present]
    if missing:
        return f"the suite has no {' or '.join(missing)} tests: it measures {', '.join(present) or 'nothing'} only"
    return None


def percent(score: float) -> str:
    """A score as a whole percentage; ``?`` for what is not a finite number (a store damaged by hand)."""
    return f"{round(score * 100)}%" if math.isfinite(score) else "?"


def tier_text(tier: str) -> Text:
    """A tier name, coloured by rank."""
    return Text(tier, style=f"bold {TIER_STYLE.get(tier, '')}")


def record_confidence(record: LevelRecord) -> Confidence | None:
    """The record's tier confidence and every category's interval; None when any is absent or damaged."""
    intervals: Mapping[str, tuple[float, float] | None] = record.intervals or {}
    found: dict[Category, tuple[float, float]] = {}
    for category in CATEGORIES:
        span = intervals.get(category)
        if span is None:
            return None
        found[category] = span
    if record.tier_confidence is None:
        return None
    return Confidence(found, float(record.tier_confidence))


def confidence_note(sure: Confidence | None) -> str:
    """`` (confidence 0.71)`` to follow a level's tier; empty for a level without confidence."""
    return f" (confidence {sure.tier_confidence:.2f})" if sure is not None else ""


def confidence_lines(sure: Confidence, repeats: int) -> Iterable[Text]:
    """The 95% interval of each category score, and the advice a borderline tier needs."""
    spans = "  ".join(f"{c} {percent(sure.intervals[c][0])}-{percent(sure.intervals[c][1])}" for c in CATEGORIES)
    yield Text(f"  95% intervals: {spans}", style="dim")
    if sure.borderline:
        yield Text(
            f"  borderline: tier confidence {sure.tier_confidence:.2f} is under {BORDERLINE}; "
            f"{borderline_advice(repeats)}",
            style="yellow",
        )


def level_head(record: LevelRecord, head: HeadOf) -> Iterable[Text]:
    """The head of a level: its line, scores and speed, speed figures, tolerance, failure kinds, intervals, pass^k."""
    applied = "" if record.effort_applied is not False else " (effort not applied)"
    repeats = record.repeats or 1
    repeated = f"  ({repeats} runs per test)" if repeats > 1 else ""
    sure = record_confidence(record) if head.complete and head.tier == record.tier else None  # of that tier only
    no_tier = head.no_tier if head.measured else None  # an unmeasured level says so in its tier already
    if no_tier is not None:
        sure = None
    key = one_line(head.key)
    marks = "  recommended" if head.recommended else ""
    shown = Text("none", style="dim") if no_tier is not None else tier_text(head.tier)
    line = ((key, "bold"), applied, "  tier ", shown, confidence_note(sure), marks, repeated)
    yield Text.assemble(*line, head.where)
    if no_tier is not None:
        yield Text(f"  no tier: {no_tier}", style="yellow")
    if not head.measured:
        yield Text("  no test was measured: no scores, no speed", style="red")
    else:
        yield _scores_line(record)
        if figures := figures_line(record.speed_figures):
            yield Text(f"  speed {figures}", style="dim")
        if tolerance := tolerance_line(record):
            yield Text(f"  {tolerance}", style="bold")
    if said := faults_line(record.answer_faults or {}):
        yield Text(f"  failure kinds: {said}", style="yellow")
    if sure is not None:
        yield from confidence_lines(sure, repeats)
    yield from reliability_lines(stored_reliability(record) if head.measured else None)


def _scores_line(record: LevelRecord) -> Text:
    """Categories, speed (and where it came from when not the server's own timings) and answer length."""
    scores = record.scores or {}
    cats = "  ".join(f"{c} {percent(scores.get(c, 0.0))}" for c in CATEGORIES)
    estimated = " (estimated)" if record.usage_estimated else ""
    how = f" ({record.speed_source} time)" if record.speed_source in ("wall", "stream") else ""
    speed = f"{record.tokens_per_second or 0:g} tok/s{how}"
    tokens = record.avg_completion_tokens or 0
    return Text(f"  {cats}  |  {speed}  |  avg {tokens:g} completion tokens{estimated}")


def tolerance_line(record: LevelRecord) -> str | None:
    """``tool-count tolerance: 8 tools (tool score by count: 1 100%, 4 100%, 8 95%, 16 70%)``; None without one."""
    found, scores = record.tool_count_tolerance, record.tool_count_scores
    if not isinstance(found, int) or isinstance(found, bool) or scores is None:
        return None
    by_count = ", ".join(f"{n} {percent(s)}" for n, s in scores.items())
    return f"tool-count tolerance: {found} tools (tool score by count: {by_count}); tsuka gate offers at most that many"
