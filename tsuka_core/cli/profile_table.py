"""The table ``tsuka profiles`` prints: one row per stored profile, every value read from the store shown as text.

Each row's second line holds what the profile says of itself beyond its
scores: the suite it was measured with, its tier confidence (``!`` when
borderline), each category score's 95% interval and when it was measured;
a profile measured with ``--repeats`` adds each category's pass^1 and pass^n.
Every value comes from a file anyone may have edited, so each is shown as
plain text (never read as markup), and a value of the wrong kind as ``?``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from tsuka_core.cli.display import percent
from tsuka_core.cli.reliability_text import pass_hat_span
from tsuka_core.engine.confidence import BORDERLINE
from tsuka_core.engine.reliability import Reliability, stored_reliability
from tsuka_core.engine.speed_figures import figures_line
from tsuka_core.storage.profile import Profile
from tsuka_core.storage.profile_confidence import ABSENT, StoredConfidence, borderline_advice, stored_confidence
from tsuka_core.storage.store import StoreData
from tsuka_core.terms import CATEGORIES

__all__ = ["ProfileTable", "confidence_text", "interval_text", "suite_text"]

BORDERLINE_MARK = "!"
"""Follows the confidence of a borderline tier; explained once under the table."""

_HEADERS = (
    "profile\nsuite",
    "tier\nconf.",
    *(f"{c}\n95% int." for c in CATEGORIES),
    "tok/s",
    "status\ntested at",
)


def confidence_text(found: StoredConfidence) -> Text:
    """``0.92``; ``0.62 !`` in yellow when borderline; ``?`` when malformed; empty when the profile has none."""
    value = found.tier_confidence
    if value is ABSENT:
        return Text("")
    if not isinstance(value, float):
        return Text("?")
    if found.borderline:
        return Text(f"{value:.2f} {BORDERLINE_MARK}", style="yellow")
    return Text(f"{value:.2f}")


def interval_text(value: object) -> str:
    """``62-95`` (percent), ``?`` when malformed, empty when absent."""
    if value is ABSENT:
        return ""
    if not isinstance(value, tuple):
        return "?"
    low, high = value
    return f"{round(low * 100)}-{round(high * 100)}"


def suite_text(value: object) -> str:
    """The suite a profile names (``default``, a registered name or a folder), ``?`` if not a string, else empty."""
    if value is None:
        return ""
    return value if isinstance(value, str) else "?"


def _score(profile: Profile, category: str) -> str:
    value = (profile.scores or {}).get(category)
    return "?" if value is None else percent(value)


def _lines(first: str | Text, *more: str | Text) -> Text:
    """A cell of a first line and the others that are not empty, each dim unless it has a style of its own."""
    cell = first if isinstance(first, Text) else Text(first)
    for line in more:
        if not line:
            continue
        below = line if isinstance(line, Text) else Text(line)
        if not below.style and not below.spans:
            below.stylize("dim")
        cell = Text.assemble(cell, "\n", below)
    return cell


def _category_cell(profile: Profile, category: str, interval: str, sure: Reliability | None) -> Text:
    """The score, its interval, and with repeats its pass^1 and pass^n."""
    return _lines(_score(profile, category), interval, pass_hat_span(sure, category) if sure is not None else "")


@dataclass
class ProfileTable:
    """The rows of the store's profiles, and whether any was marked borderline."""

    data: StoreData
    judge: Callable[[Profile], tuple[bool, str]]
    """A profile's validity and the reason it is stale."""
    title: str
    table: Table = field(init=False)
    shown: int = 0
    borderline: bool = False
    repeats: int = 1
    """The most runs per test of a borderline profile: the advice asks for more when there were some."""
    speeds: list[str] = field(default_factory=list)
    """Each shown profile's speed figures, one line each, for under the table."""

    def __post_init__(self) -> None:
        self.table = Table(title=Text(self.title), title_justify="left")
        self.table.add_column(_HEADERS[0], overflow="fold")  # a suite's folder is shown whole, over several lines
        for header in _HEADERS[1:]:
            self.table.add_column(header)

    def add(self, key: str, entry: Profile, recommendations: Mapping[str, Any] | None = None) -> None:
        """One row for the profile stored under ``key``; a value of the wrong kind is shown as found, or ``?``.

        ``recommendations`` are those of the profile's suite (default: the store's default suite's).
        """
        get = entry.found
        recommended_efforts = self.data.recommendations if recommendations is None else recommendations
        recommended = " *" if recommended_efforts.get(str(get("model"))) == get("reasoningEffort") else ""
        found = stored_confidence(entry)
        valid, reason = self.judge(entry)
        sure = stored_reliability(entry)
        self.table.add_row(
            _lines(f"{key}{recommended}", suite_text(get("suite"))),
            _lines(str(get("tier")), confidence_text(found)),
            *(_category_cell(entry, c, interval_text(found.intervals[c]), sure) for c in CATEGORIES),
            Text(str(get("tokensPerSecond"))),
            _lines(Text("valid", style="green") if valid else Text(reason, style="yellow"), str(get("testedAt"))),
        )
        self.shown += 1
        if figures := figures_line(entry.speed_figures):
            self.speeds.append(f"{key}: {figures}")
        if found.borderline:
            self.borderline = True
            self.repeats = max(self.repeats, entry.repeats or 1)

    def legend(self) -> list[str]:
        """The lines under the table: what ``*`` marks, and what ``!`` marks when a row has it."""
        lines = ["[dim]* the recommended effort of that model[/dim]"]
        lines += [f"[dim]speed {escape(line)}[/dim]" for line in self.speeds]
        if self.borderline:
            lines.append(
                f"[yellow]{BORDERLINE_MARK} borderline: tier confidence under {BORDERLINE}; "
                f"{borderline_advice(self.repeats)}[/yellow]"
            )
        return lines
