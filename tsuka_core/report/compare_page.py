"""What the comparison page shows, gathered from a Comparison: both sides, and per level its tiers, categories, changes.

Nothing here writes HTML but the difference bars (which escape their own
text): the templates escape every other value as they place it.
"""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from tsuka_core.compare.model import CategoryDelta, Comparison, LevelComparison, SideInfo, TestChange
from tsuka_core.judge.scoring import tier_rank
from tsuka_core.report.compare_svg import diff_bar, nice_scale
from tsuka_core.report.figures import pct

__all__ = ["CategoryRow", "ChangeRow", "LevelRow", "PageView", "SideView", "page_of"]

_DIRECTIONS = {"pass->fail": "pass → fail", "fail->pass": "fail → pass", "score": "score changed"}
"""Each direction of a changed test as the page names it, in the order the page lists them."""


@dataclass(frozen=True)
class SideView:
    """One side of the comparison as the header shows it: ``A`` or ``B``, and what it is."""

    letter: str
    info: SideInfo


@dataclass(frozen=True)
class CategoryRow:
    """One category of a level: the comparison's numbers, and the difference with its interval as a bar."""

    delta: CategoryDelta
    bar: Markup
    tone: str
    """``worse`` or ``better`` when the difference is beyond noise, ``noise`` otherwise."""


def _category(delta: CategoryDelta, scale: float) -> CategoryRow:
    tone = "worse" if delta.regressed else "better" if delta.improved else "noise"
    return CategoryRow(delta, diff_bar(delta.difference, *delta.interval, scale=scale, tone=tone), tone)


@dataclass(frozen=True)
class ChangeRow:
    """One changed test: how it changed (as shown), each side's outcome, and its checks that flipped."""

    test: TestChange

    @property
    def direction(self) -> str:
        """``pass → fail``, ``fail → pass`` or ``score changed``."""
        return _DIRECTIONS.get(self.test.direction, self.test.direction)

    @property
    def tone(self) -> str:
        """``worse`` when the test lost (stopped passing, or its score fell), ``better`` otherwise."""
        return "worse" if self.test.direction == "pass->fail" or self.test.difference < 0 else "better"

    @property
    def before(self) -> str:
        """Side A's status and score: ``pass 100%``."""
        return f"{self.test.status_a} {pct(self.test.score_a)}"

    @property
    def after(self) -> str:
        """Side B's status and score."""
        return f"{self.test.status_b} {pct(self.test.score_b)}"


@dataclass(frozen=True)
class LevelRow:
    """One paired level: the comparison's numbers, category rows, and changed tests (pass → fail first)."""

    level: LevelComparison
    categories: tuple[CategoryRow, ...]
    changes: tuple[ChangeRow, ...]

    @property
    def movement(self) -> str:
        """``dropped``, ``raised`` or ``same``: how the tier moved from A to B."""
        if self.level.tier_dropped:
            return "dropped"
        return "raised" if tier_rank(self.level.tier_b) > tier_rank(self.level.tier_a) else "same"

    def count(self, direction: str) -> int:
        """How many tests changed in ``direction`` (``pass->fail``, ``fail->pass`` or ``score``)."""
        return sum(1 for c in self.changes if c.test.direction == direction)


@dataclass(frozen=True)
class PageView:
    """The whole comparison page."""

    comparison: Comparison
    sides: tuple[SideView, SideView]
    levels: tuple[LevelRow, ...]


def _order(change: TestChange) -> int:
    return list(_DIRECTIONS).index(change.direction) if change.direction in _DIRECTIONS else len(_DIRECTIONS)


def _level(level: LevelComparison, scale: float) -> LevelRow:
    rows = tuple(_category(delta, scale) for delta in level.categories)
    changes = tuple(ChangeRow(t) for t in sorted(level.changed_tests, key=_order))
    return LevelRow(level, rows, changes)


def page_of(comparison: Comparison) -> PageView:
    """The page of ``comparison``: every bar drawn on one scale, so the rows of every level can be read together."""
    scale = nice_scale(*(v for lv in comparison.levels for d in lv.categories for v in (d.difference, *d.interval)))
    sides = (SideView("A", comparison.side_a), SideView("B", comparison.side_b))
    return PageView(comparison, sides, tuple(_level(level, scale) for level in comparison.levels))
