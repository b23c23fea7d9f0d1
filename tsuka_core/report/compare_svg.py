"""The comparison page's small inline SVG: a difference and its interval drawn as a bar around zero.

Like the report's charts (:mod:`tsuka_core.report.svg`), every piece of text
is escaped here, so the drawing is returned as :class:`markupsafe.Markup`.
"""

from __future__ import annotations

from markupsafe import Markup, escape

from tsuka_core.report.figures import pct

__all__ = ["SCALES", "diff_bar", "nice_scale", "signed_pct"]

WIDTH, HEIGHT, PAD = 160, 22, 6
SCALES = (0.1, 0.2, 0.25, 0.5, 1.0)
"""The half-widths a page's bars may span, as a share of the score scale (1.0 is ±100%)."""


def signed_pct(value: float) -> str:
    """A difference as a whole percentage with its sign: ``+12%``, ``−5%``, ``0%``."""
    shown = pct(abs(value))
    if shown == "0%":
        return shown
    return ("+" if value > 0 else "−") + shown


def nice_scale(*extents: float) -> float:
    """The smallest of :data:`SCALES` that holds every value of ``extents`` (by size) in view."""
    largest = max((abs(v) for v in extents), default=0.0)
    return next((s for s in SCALES if largest <= s), SCALES[-1])


def _x(value: float, scale: float) -> float:
    half = (WIDTH - 2 * PAD) / 2
    return PAD + half + half * max(-1.0, min(1.0, value / scale))


def diff_bar(diff: float, low: float, high: float, *, scale: float, tone: str) -> Markup:
    """An SVG of ``diff`` (a dot) and its interval ``low``..``high`` (a bar) against a zero line, ±``scale`` wide.

    ``tone`` (``worse``, ``better`` or ``noise``) is the drawing's class, which the page's styles colour.
    """
    title = f"difference {signed_pct(diff)}, 95% interval {signed_pct(low)} to {signed_pct(high)}"
    x0, x1, xd, xz = _x(low, scale), _x(high, scale), _x(diff, scale), _x(0.0, scale)
    mid = HEIGHT / 2
    parts = [
        f'<svg class="diff {escape(tone)}" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
        f'<line class="axis" x1="{PAD}" x2="{WIDTH - PAD}" y1="{mid}" y2="{mid}"/>',
        f'<line class="zero" x1="{xz:.1f}" x2="{xz:.1f}" y1="2" y2="{HEIGHT - 2}"/>',
        f'<rect class="interval" x="{x0:.1f}" y="{mid - 3}" width="{max(x1 - x0, 1.0):.1f}" height="6" rx="3"/>',
        f'<circle class="point" cx="{xd:.1f}" cy="{mid}" r="4"/>',
        "</svg>",
    ]
    return Markup("".join(parts))  # the only text, the title, went through escape
