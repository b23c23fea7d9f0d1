"""How results look in a terminal: tables, per-level summaries, the recommendation."""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tsuka_core.cli.reliability_text import reliability_lines
from tsuka_core.cli.safe_console import SafeConsole
from tsuka_core.engine.answer_faults import faults_line
from tsuka_core.engine.confidence import BORDERLINE, Confidence, level_confidence
from tsuka_core.engine.reliability import reliability, tries_of
from tsuka_core.engine.speed_figures import figures_line
from tsuka_core.storage.profile_confidence import borderline_advice
from tsuka_core.suite.model import Suite
from tsuka_core.terms import CATEGORIES
from tsuka_core.textsafe import one_line

if TYPE_CHECKING:
    from tsuka_core.engine.results import LevelResult, RunScores, TestResult

__all__ = [
    "confidence_lines",
    "confidence_note",
    "console",
    "format_weight",
    "level_summary",
    "mean_and_spread",
    "percent",
    "run_scores",
    "suite_table",
]

TIER_STYLE = {"small": "red", "medium": "yellow", "large": "green"}


def console(stderr: bool = False) -> Console:
    """A rich console on stdout (or stderr) that falls back to plain text off a terminal."""
    terminal = (sys.stderr if stderr else sys.stdout).isatty()
    return SafeConsole(stderr=stderr, highlight=False, width=None if terminal else 160)


def format_weight(weight: float) -> str:
    """A weight as written in a test file: 2, not 2.0."""
    return f"{weight:g}"


def percent(score: float) -> str:
    """A score as a whole percentage; ``?`` for what is not a finite number (a store damaged by hand)."""
    return f"{round(score * 100)}%" if math.isfinite(score) else "?"


def suite_table(suite: Suite) -> Table:
    """The tests of a suite: file, name, category, weight, steps, checks."""
    table = Table(title=str(suite.path), title_justify="left")
    for column in ("file", "name", "category", "weight", "steps", "checks"):
        table.add_column(column, justify="right" if column in ("weight", "steps", "checks") else "left")
    for test in suite.tests:
        table.add_row(
            test.file,
            test.name,
            test.category,
            format_weight(test.weight),
            str(len(test.steps)),
            str(test.check_count),
        )
    return table


def tier_text(tier: str) -> Text:
    """A tier name, coloured by rank."""
    return Text(tier, style=f"bold {TIER_STYLE.get(tier, '')}")


class _Run(Protocol):
    @property
    def status(self) -> str: ...

    @property
    def score(self) -> float: ...


def mean_and_spread(group: RunScores) -> str:
    """``0.67 ± 0.47``: the score a repeated test counts and how far its runs' scores vary."""
    return f"{group.score:.2f} ± {group.spread:.2f}"


def run_scores(runs: Iterable[_Run]) -> str:
    """Each run's score in run order, ``ERR`` for a run that ended in error: ``1.00 ERR 0.50``."""
    return " ".join(f"{r.score:.2f}" if r.status == "ok" else "ERR" for r in runs)


def level_summary(level: LevelResult) -> Iterable[Text]:
    """Lines summarising one level: tier, categories, speed, each test's score and failed checks.

    With repeats, a test shows its mean score, the spread and each run's score;
    a failed check names the run it failed in. Test names, errors and details
    are shown as plain text, never read as markup.
    """
    applied = "" if level.effort_applied else " (effort not applied)"
    repeated = f"  ({level.repeats} runs per test)" if level.repeats > 1 else ""
    sure = level_confidence(level) if level.complete else None
    yield Text.assemble(
        (one_line(f"{level.model}@{level.effort}"), "bold"),
        applied,
        "  tier ",
        tier_text(level.shown_tier),
        confidence_note(sure),
        repeated,
    )
    if not level.measured_any:
        yield Text("  no test was measured: no scores, no speed", style="red")
    else:
        yield _scores_line(level)
        if figures := figures_line(level.measured.get("speedFigures")):
            yield Text(f"  speed {figures}", style="dim")
        if tolerance := tolerance_line(level.measured):
            yield Text(f"  {tolerance}", style="bold")
    if said := faults_line(level.measured.get("answerFaults") or {}):
        yield Text(f"  failure kinds: {said}", style="yellow")
    if sure is not None:
        yield from confidence_lines(sure, level.repeats)
    yield from reliability_lines(reliability(tries_of(level.per_test)) if level.measured_any else None)
    for group in level.per_test:
        name = group.test.name
        if level.repeats == 1 and group.runs[0].status == "error":
            yield Text(f"    {name:<28} ERROR  {one_line(str(group.runs[0].error))}", style="red")
            continue
        if level.repeats == 1:
            yield Text(f"    {name:<28} {group.score:.2f}")
        else:
            yield Text(f"    {name:<28} {mean_and_spread(group)}  runs {run_scores(group.runs)}")
        for run in group.runs:
            yield from _run_failures(run, f"run {run.repeat}: " if level.repeats > 1 else "")


def _scores_line(level: LevelResult) -> Text:
    """Categories, speed (and where it came from when not the server's own timings) and answer length."""
    cats = "  ".join(f"{c} {percent(level.scores.get(c, 0.0))}" for c in CATEGORIES)
    estimated = " (estimated)" if level.usage_estimated else ""
    source = level.measured.get("speedSource")
    how = f" ({source} time)" if source in ("wall", "stream") else ""
    speed = f"{level.tokens_per_second:g} tok/s{how}"
    return Text(f"  {cats}  |  {speed}  |  avg {level.avg_completion_tokens} completion tokens{estimated}")


def tolerance_line(measured: Mapping[str, Any]) -> str | None:
    """``tool-count tolerance: 8 tools (tool score by count: 1 100%, 4 100%, 8 95%, 16 70%)``; None without one."""
    found = measured.get("toolCountTolerance")
    scores = measured.get("toolCountScores")
    if not isinstance(found, int) or not isinstance(scores, Mapping):
        return None
    by_count = ", ".join(f"{n} {percent(s)}" for n, s in scores.items() if isinstance(s, int | float))
    return f"tool-count tolerance: {found} tools (tool score by count: {by_count}); tsuka gate offers at most that many"


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


def _run_failures(result: TestResult, prefix: str) -> Iterable[Text]:
    """One line per check that did not pass in one run (and the error that stopped it, with repeats)."""
    if result.status == "error" and prefix:
        yield Text(f"      {prefix}ERROR  {one_line(str(result.error))}", style="red")
    for step in result.steps:
        for check in step.checks:
            if check.outcome.passed:
                continue
            mark = "!" if check.outcome.status == "errored" else "x"
            style = "magenta" if mark == "!" else "dim"
            detail = one_line(check.outcome.detail)
            yield Text(f"      {mark} {prefix}{check.location} {check.type}: {detail}", style=style)
