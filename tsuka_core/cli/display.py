"""How results look in a terminal: tables, per-level summaries, the recommendation."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tsuka_core.cli.level_head import (
    TIER_STYLE,
    HeadOf,
    confidence_lines,
    confidence_note,
    level_head,
    no_tier_reason,
    percent,
    tier_text,
)
from tsuka_core.cli.safe_console import SafeConsole
from tsuka_core.engine.record import record_of
from tsuka_core.suite.model import Suite
from tsuka_core.textsafe import one_line

if TYPE_CHECKING:
    from tsuka_core.engine.results import LevelResult, RunScores, TestResult

__all__ = [
    "TIER_STYLE",
    "confidence_lines",
    "confidence_note",
    "console",
    "format_weight",
    "level_summary",
    "mean_and_spread",
    "percent",
    "run_scores",
    "suite_table",
    "tier_text",
]


def console(stderr: bool = False) -> Console:
    """A rich console on stdout (or stderr) that falls back to plain text off a terminal."""
    terminal = (sys.stderr if stderr else sys.stdout).isatty()
    return SafeConsole(stderr=stderr, highlight=False, width=None if terminal else 160)


def format_weight(weight: float) -> str:
    """A weight as written in a test file: 2, not 2.0."""
    return f"{weight:g}"


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


def level_summary(level: LevelResult, partial: str | None = None) -> Iterable[Text]:
    """Lines summarising one level: its record's head (``cli.level_head``), then each test's score and failed checks.

    With repeats, a test shows its mean score, the spread and each run's score;
    a failed check names the run it failed in. Test names, errors and details
    are shown as plain text, never read as markup.
    """
    categories = {result.test.category for result in level.tests}
    no_tier = no_tier_reason(level.complete, partial, categories)
    head = HeadOf(
        f"{level.model}@{level.effort}", level.shown_tier, level.complete, level.measured_any, no_tier=no_tier
    )
    yield from level_head(record_of(level), head)
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
