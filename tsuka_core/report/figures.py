"""The HTML report's charts of one model's levels: scores, intervals, cost, speed, and tool score by tool count."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from tsuka_core.engine.confidence import BORDERLINE, Confidence
from tsuka_core.engine.speed_figures import TOKENS_PER_SECOND
from tsuka_core.engine.toolcount import MARGIN
from tsuka_core.report.svg import Interval, IntervalGroup, Series, bar_chart, interval_chart
from tsuka_core.storage.history_query import StoredLevel
from tsuka_core.terms import CATEGORIES

__all__ = ["CATEGORY_COLORS", "CATEGORY_SHORT", "Figure", "effort_labels", "figures", "pct"]

CATEGORY_COLORS = {"instruction": "#6366f1", "json": "#0ea5e9", "toolCalling": "#f59e0b"}
"""One colour per category, the same in every chart and legend."""

CATEGORY_SHORT = {"instruction": "instr.", "json": "json", "toolCalling": "tools"}
"""Each category's name as a narrow table heading."""


@dataclass(frozen=True)
class Figure:
    """One chart as the page shows it: caption, a note under it, the SVG drawing, and its legend's keys."""

    caption: str
    note: str
    svg: Markup
    legend: tuple[tuple[str, str], ...] = ()
    """(name, colour) of each key; none when the chart has one series."""


def pct(value: float) -> str:
    """``value`` (0 to 1) as a whole percentage: ``0.5`` is ``50%``."""
    return f"{round(value * 100)}%"


def _num(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:,.1f}"


def effort_labels(levels: Sequence[StoredLevel]) -> list[str]:
    """Each level's effort, marked when the backend could not apply it."""
    return [lv.effort if lv.record.effort_applied is not False else f"{lv.effort} (not applied)" for lv in levels]


def figures(levels: Sequence[StoredLevel], sure: Sequence[Confidence | None] = ()) -> list[Figure]:
    """The charts of one model's levels (in effort order): scores, their intervals, cost against score, and speed.

    ``sure`` holds each level's confidence (None where it has none); the interval chart shows the levels that have one.
    """
    intervals = _interval_chart(levels, sure)
    tools = _tool_count_chart(levels)
    charts = [_score_chart(levels), *([intervals] if intervals else []), _cost_chart(levels), _speed_chart(levels)]
    return charts + ([tools] if tools else [])


def _score_chart(levels: Sequence[StoredLevel]) -> Figure:
    series = [Series(c, CATEGORY_COLORS[c], [lv.scores.get(c, 0.0) for lv in levels]) for c in CATEGORIES]
    tiers = [lv.tier for lv in levels]
    svg = bar_chart("Category scores by effort", effort_labels(levels), series, fmt=pct, top=1.0, sublabels=tiers)
    note = "Tier under each effort. large needs toolCalling ≥ 90%, instruction and json ≥ 85%."
    return Figure("Category scores by effort", note, svg, tuple((c, CATEGORY_COLORS[c]) for c in CATEGORIES))


def _interval_group(level: StoredLevel, label: str, found: Confidence) -> IntervalGroup:
    """One level's heading (effort, tier, its confidence) and each category's score and interval."""
    heading = f"{label} · tier {level.tier} · confidence {found.tier_confidence:.2f}"
    rows = [
        Interval(CATEGORY_SHORT[c], CATEGORY_COLORS[c], level.scores.get(c, 0.0), *found.intervals[c])
        for c in CATEGORIES
    ]
    return IntervalGroup(heading + (" · borderline" if found.borderline else ""), rows, found.borderline)


def _interval_chart(levels: Sequence[StoredLevel], sure: Sequence[Confidence | None]) -> Figure | None:
    groups = [
        _interval_group(level, label, found)
        for level, label, found in zip(levels, effort_labels(levels), sure, strict=False)
        if found is not None
    ]
    if not groups:
        return None
    svg = interval_chart("Category scores with their 95% intervals", groups, pct)
    note = (
        "Line: the 95% interval of each score (seeded bootstrap over the tests and their runs); dot: the score. "
        f"Confidence: the share of resamples giving the same tier; under {BORDERLINE} the tier is borderline."
    )
    return Figure("How sure each score is", note, svg, tuple((c, CATEGORY_COLORS[c]) for c in CATEGORIES))


def _mean_score(level: StoredLevel) -> float:
    return sum(level.scores.get(c, 0.0) for c in CATEGORIES) / len(CATEGORIES)


def _cost_chart(levels: Sequence[StoredLevel]) -> Figure:
    tokens = Series(
        "completion tokens per request", "#64748b", [float(lv.record.avg_completion_tokens or 0) for lv in levels]
    )
    score = Series("mean category score", "#12b76a", [_mean_score(lv) for lv in levels])
    svg = bar_chart("Completion tokens by effort", effort_labels(levels), [tokens], fmt=_num, line=score, line_fmt=pct)
    note = "Bars: tokens spent per request. Line: mean score. Tokens rising while the line stays flat is over-thinking."
    legend = (("completion tokens / request", "#64748b"), ("mean score (right axis)", "#12b76a"))
    return Figure("What thinking costs", note, svg, legend)


_EFFORT_COLORS = ("#6366f1", "#0ea5e9", "#f59e0b", "#12b76a")


def _tool_count_chart(levels: Sequence[StoredLevel]) -> Figure | None:
    """Tool score against the number of tools offered, one series per effort, for a suite that measures it."""
    labelled = zip(levels, effort_labels(levels), strict=True)
    found = [(label, by) for level, label in labelled if (by := level.record.tool_scores_by_count)]
    if not found:
        return None
    counts = sorted({n for _, by_count in found for n in by_count})
    series = [
        Series(label, _EFFORT_COLORS[i % len(_EFFORT_COLORS)], [by_count.get(n) for n in counts])
        for i, (label, by_count) in enumerate(found)
    ]
    svg = bar_chart("Tool score by number of tools", [str(n) for n in counts], series, fmt=pct, top=1.0)
    note = f"The same tasks offered with more tools; tolerated while within {round(MARGIN * 100)} points of 1 tool."
    return Figure("Accuracy against tool count", note, svg, tuple((s.name, s.color) for s in series))


def _speed_chart(levels: Sequence[StoredLevel]) -> Figure:
    speed = Series("tokens per second", "#8b5cf6", [float(lv.record.tokens_per_second or 0) for lv in levels])
    svg = bar_chart("Tokens per second by effort", effort_labels(levels), [speed], fmt=_num)
    estimated = any(lv.record.usage_estimated for lv in levels)
    sources = dict.fromkeys(lv.record.speed_source for lv in levels if lv.record.speed_source)
    said = "; ".join(TOKENS_PER_SECOND[s] for s in sources) or "how it was measured was not recorded"
    note = said[0].upper() + said[1:] + (" (some usage estimated)." if estimated else ".")
    return Figure("Tokens per second", note, svg)
