"""Inline SVG charts for the HTML report: grouped bars with an optional line, and intervals; no script.

Every piece of text in a chart (title, labels, values) is escaped here, so a
chart is returned as :class:`markupsafe.Markup` that templates insert as is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from markupsafe import Markup

__all__ = ["Interval", "IntervalGroup", "Series", "bar_chart", "interval_chart"]

WIDTH, HEIGHT = 460, 250
LEFT, RIGHT, TOP, BOTTOM = 46, 46, 18, 44


@dataclass(frozen=True)
class Series:
    """One named row of values, one per group (None where there is no value), drawn in one colour."""

    name: str
    color: str
    values: Sequence[float | None]


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _nice_max(value: float) -> float:
    """The smallest 1, 2, 4, 5 or 8 times a power of ten at or above ``value`` (1 when there is nothing)."""
    if value <= 0:
        return 1.0
    scale = 1.0
    while scale * 10 <= value:
        scale *= 10
    while scale > value:
        scale /= 10
    return next(m * scale for m in (1, 2, 4, 5, 8, 10) if m * scale >= value)


def _axis(top: float, fmt: Callable[[float], str], x: float, anchor: str) -> list[str]:
    plot_h = HEIGHT - TOP - BOTTOM
    parts: list[str] = []
    for i in range(5):
        value = top * i / 4
        y = TOP + plot_h - plot_h * i / 4
        if anchor == "end":
            parts.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>')
        parts.append(f'<text class="tick" x="{x}" y="{y + 4:.1f}" text-anchor="{anchor}">{_e(fmt(value))}</text>')
    return parts


def bar_chart(
    title: str,
    groups: Sequence[str],
    bars: Sequence[Series],
    *,
    fmt: Callable[[float], str] = lambda v: f"{v:g}",
    top: float | None = None,
    line: Series | None = None,
    line_fmt: Callable[[float], str] = lambda v: f"{v:g}",
    line_top: float = 1.0,
    sublabels: Sequence[str] = (),
) -> Markup:
    """An SVG of grouped bars (one group per label, one bar per series), labelled; a line on a right axis if given."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    highest = max([v for s in bars for v in s.values if v is not None] or [0.0])
    top = top if top is not None else _nice_max(highest)
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" '
        f'aria-label="{_e(title)}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{_e(title)}</title>",
        *_axis(top, fmt, LEFT - 6, "end"),
    ]
    if line is not None:
        parts.extend(_axis(line_top, line_fmt, WIDTH - RIGHT + 6, "start"))
    slot = plot_w / max(1, len(groups))
    width = slot * 0.72 / max(1, len(bars))
    for g, label in enumerate(groups):
        x0 = LEFT + g * slot + slot * 0.14
        for b, series in enumerate(bars):
            value = series.values[g] if g < len(series.values) else None
            if value is None:
                continue
            h = plot_h * min(value, top) / top
            x, y = x0 + b * width, TOP + plot_h - h
            parts.append(
                f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{max(width - 2, 1):.1f}" height="{max(h, 0.5):.1f}" '
                f'fill="{_e(series.color)}" rx="2">'
                f"<title>{_e(series.name)} at {_e(label)}: {_e(fmt(value))}</title></rect>"
            )
            if len(bars) == 1 or width >= 30:
                parts.append(
                    f'<text class="value" x="{x + width / 2 - 1:.1f}" y="{y - 3:.1f}" text-anchor="middle">'
                    f"{_e(fmt(value))}</text>"
                )
        cx = LEFT + g * slot + slot / 2
        parts.append(
            f'<text class="label" x="{cx:.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">{_e(label)}</text>'
        )
        if g < len(sublabels) and sublabels[g]:
            parts.append(
                f'<text class="sublabel" x="{cx:.1f}" y="{HEIGHT - BOTTOM + 31}" text-anchor="middle">'
                f"{_e(sublabels[g])}</text>"
            )
    if line is not None:
        parts.extend(_line(line, groups, slot, line_top, line_fmt))
    parts.append(f'<line class="axis" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{TOP + plot_h}" y2="{TOP + plot_h}"/>')
    parts.append("</svg>")
    return Markup("".join(parts))  # every text in parts went through _e


def _line(series: Series, groups: Sequence[str], slot: float, top: float, fmt: Callable[[float], str]) -> list[str]:
    plot_h = HEIGHT - TOP - BOTTOM
    points = [
        (LEFT + g * slot + slot / 2, TOP + plot_h - plot_h * min(v, top) / top, v, groups[g])
        for g, v in enumerate(series.values)
        if v is not None and g < len(groups)
    ]
    if not points:
        return []
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in points)
    parts = [f'<polyline class="line" points="{path}" stroke="{_e(series.color)}"/>']
    for x, y, v, label in points:
        parts.append(
            f'<circle class="dot" cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{_e(series.color)}">'
            f"<title>{_e(series.name)} at {_e(label)}: {_e(fmt(v))}</title></circle>"
        )
    return parts


@dataclass(frozen=True)
class Interval:
    """One row of an interval chart: a measured value (0 to 1) with its interval, named and coloured."""

    label: str
    color: str
    value: float
    low: float
    high: float


@dataclass(frozen=True)
class IntervalGroup:
    """A heading and the rows under it; ``flagged`` draws the heading as a warning."""

    heading: str
    rows: Sequence[Interval]
    flagged: bool = False


I_LEFT, I_RIGHT, I_TOP, I_AXIS = 56, 104, 6, 26
I_HEAD, I_ROW = 20, 17


def _x(value: float) -> float:
    """The horizontal position of ``value`` (clamped to 0..1) on an interval chart's axis."""
    return I_LEFT + (WIDTH - I_LEFT - I_RIGHT) * min(max(value, 0.0), 1.0)


def interval_chart(title: str, groups: Sequence[IntervalGroup], fmt: Callable[[float], str]) -> Markup:
    """An SVG of horizontal intervals on a 0-100% axis: per row a line from low to high and a dot at the value."""
    height = I_TOP + sum(I_HEAD + I_ROW * len(g.rows) for g in groups) + I_AXIS
    parts = [
        f'<svg class="chart intervals" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" '
        f'aria-label="{_e(title)}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{_e(title)}</title>",
    ]
    bottom = height - I_AXIS
    for i in range(5):
        x = _x(i / 4)
        parts.append(f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="{I_TOP}" y2="{bottom}"/>')
        parts.append(f'<text class="tick" x="{x:.1f}" y="{bottom + 14}" text-anchor="middle">{_e(fmt(i / 4))}</text>')
    y = float(I_TOP)
    for group in groups:
        flag = " flagged" if group.flagged else ""
        parts.append(f'<text class="heading{flag}" x="0" y="{y + 14:.1f}">{_e(group.heading)}</text>')
        y += I_HEAD
        for row in group.rows:
            parts.extend(_interval_row(row, y + I_ROW / 2, fmt))
            y += I_ROW
    parts.append(f'<line class="axis" x1="{I_LEFT}" x2="{WIDTH - I_RIGHT}" y1="{bottom}" y2="{bottom}"/>')
    parts.append("</svg>")
    return Markup("".join(parts))  # every text in parts went through _e


def _interval_row(row: Interval, y: float, fmt: Callable[[float], str]) -> list[str]:
    low, high, at = _x(row.low), _x(row.high), _x(row.value)
    shown = f"{fmt(row.value)} [{fmt(row.low)}–{fmt(row.high)}]"
    return [
        f'<text class="rowlabel" x="{I_LEFT - 8}" y="{y + 4:.1f}" text-anchor="end">{_e(row.label)}</text>',
        f'<line class="interval" x1="{low:.1f}" x2="{high:.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="{_e(row.color)}">'
        f"<title>{_e(row.label)}: {_e(shown)}</title></line>",
        f'<circle class="point" cx="{at:.1f}" cy="{y:.1f}" r="4" stroke="{_e(row.color)}">'
        f"<title>{_e(row.label)}: {_e(shown)}</title></circle>",
        f'<text class="value" x="{WIDTH - I_RIGHT + 8}" y="{y + 3:.1f}">{_e(shown)}</text>',
    ]
