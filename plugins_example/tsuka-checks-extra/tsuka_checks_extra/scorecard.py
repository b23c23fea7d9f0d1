"""A scorecard for the ``extra`` suite: the share of its tests passed whole, per suite and over all."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

# docs:start scorecard
import tsuka_core


class PassRate(tsuka_core.Scorecard):
    """The share of tests passed whole (score 1, not errored), per suite and averaged over the suites."""

    name, title = "pass-rate", "Share of tests passed"

    def knows(self, suite: str) -> bool:
        return suite == "extra" or suite.startswith("extra-")

    def figures(self, suite: str, tests: Sequence[tsuka_core.JudgedTest]) -> dict[str, tsuka_core.Figure]:
        passed = sum(1 for t in tests if t.score >= 1 and not t.errored)
        return {"passed": tsuka_core.Figure(value=passed / len(tests) if tests else 0.0, count=len(tests))}

    def rows(self, measured: Mapping[str, Mapping[str, tsuka_core.Figure]]) -> list[tsuka_core.ScoreRow]:
        rows = [tsuka_core.ScoreRow(suite, figures.get("passed"), 1) for suite, figures in measured.items()]
        mean = tsuka_core.mean_figure([r.figure for r in rows])
        return [tsuka_core.ScoreRow("All suites", mean), *rows]


# docs:end scorecard
