"""Scorecards: the figures a benchmark's own reports give (BFCL's score table, IFEval's four accuracies).

A plugin registers a :class:`Scorecard` for the suites it knows
(``register_scorecards``). After each level of such a suite, the engine hands
the scorecard the level's judged tests (:class:`JudgedTest`: every answer and
every check's verdict); :meth:`Scorecard.figures` returns the level's figures,
stored in its record (``scorecard``). After a run, and in ``tsuka scorecard``
and the report, :meth:`Scorecard.rows` combines the stored figures of every
suite it knows, for one model at one effort, into the table its benchmark
reports (a category not measured shows as missing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from tsuka_core.judge.answer import Answer
from tsuka_core.judge.checks import CheckType
from tsuka_core.judge.outcome import Outcome
from tsuka_core.record.figures import Figure

__all__ = ["Figure", "JudgedCheck", "JudgedTest", "ScoreRow", "Scorecard", "mean_figure"]


@dataclass(frozen=True)
class JudgedCheck:
    """One check of a step, with its verdict."""

    check: CheckType[Any]
    """The check as the suite states it (its ``params``, and ``evaluate`` to judge another answer)."""
    weight: float
    outcome: Outcome


@dataclass(frozen=True)
class JudgedTest:
    """One test of a level as judged: its score, and each step's answer with its checks' verdicts."""

    name: str
    category: str
    score: float
    errored: bool
    """The test could not be measured (a request failed for good): it scores 0."""
    steps: tuple[tuple[Answer | None, tuple[JudgedCheck, ...]], ...]
    """Each step's answer (None when it was never sent) and its judged checks."""


@dataclass(frozen=True)
class ScoreRow:
    """One row of a scorecard's table: a label, its figure (None: not measured), and its depth in the table."""

    label: str
    figure: Figure | None
    depth: int = 0


class Scorecard:
    """A benchmark's own figures for the suites it knows: subclass it and register the class."""

    name: ClassVar[str] = ""
    """What ``tsuka scorecard`` and a record call it (``bfcl``, ``ifeval``)."""
    title: ClassVar[str] = ""
    """The table's heading, saying what it is and how it was measured."""

    def knows(self, suite: str) -> bool:
        """Whether the suite registered as ``suite`` is one of this scorecard's."""
        raise NotImplementedError

    def figures(self, suite: str, tests: Sequence[JudgedTest]) -> dict[str, Figure]:
        """The figures of one level of ``suite`` (each test once: with repeats, the first run)."""
        raise NotImplementedError

    def rows(self, measured: Mapping[str, Mapping[str, Figure]]) -> list[ScoreRow]:
        """The table from the figures of each suite measured (by suite name); suites not measured are absent."""
        raise NotImplementedError

    def notes(self) -> list[str]:
        """Lines printed under the table: how the measurement differs from the benchmark's own run."""
        return []


def mean_figure(figures: Sequence[Figure | None], *, weighted: bool = False) -> Figure | None:
    """The mean of ``figures`` (by count when ``weighted``), over all of them: None when one is missing."""
    if not figures or any(f is None for f in figures):
        return None
    found = [f for f in figures if f is not None]
    count = sum(f.count for f in found)
    if weighted:
        value = sum(f.value * f.count for f in found) / count if count else 0.0
    else:
        value = sum(f.value for f in found) / len(found)
    return Figure(value=value, count=count)
