"""BFCL's score table from the ``bfcl-*`` suites: each category's accuracy and the aggregates BFCL computes.

As BFCL's leaderboard script aggregates (``eval_runner_helper``): the non-live
simple accuracy is the unweighted mean of Python, Java and JavaScript, the
non-live AST summary the unweighted mean of simple, multiple, parallel and
parallel multiple; the live AST summary the mean of its four categories weighted
by their entries; irrelevance the unweighted mean of the non-live and live
irrelevance; relevance the live relevance; multi-turn the unweighted mean of
base, missing function, missing parameter and long context. An aggregate over a category not
measured is shown as not measured (BFCL shows N/A).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tsuka_checks_builtin.bfcl.categories import MULTI_TURN, SINGLE_TURN, by_suite
from tsuka_core import Figure, JudgedTest, Scorecard, ScoreRow, mean_figure

__all__ = ["BfclScorecard"]

ACCURACY = "accuracy"
_LABELS = {
    "simple_python": "Python",
    "simple_java": "Java",
    "simple_javascript": "JavaScript",
    "multiple": "Multiple",
    "parallel": "Parallel",
    "parallel_multiple": "Parallel multiple",
    "irrelevance": "Irrelevance",
    "live_simple": "Simple",
    "live_multiple": "Multiple",
    "live_parallel": "Parallel",
    "live_parallel_multiple": "Parallel multiple",
    "live_irrelevance": "Irrelevance",
    "live_relevance": "Relevance",
    "multi_turn_base": "Base",
    "multi_turn_miss_func": "Missing function",
    "multi_turn_miss_param": "Missing parameter",
    "multi_turn_long_context": "Long context",
}


class BfclScorecard(Scorecard):
    """BFCL's score table: per-category accuracy, the non-live and live AST summaries, irrelevance, relevance."""

    name = "bfcl"
    title = "BFCL (function-calling mode: BFCL's messages and tools, as its OpenAI-compatible handler sends them)"

    def knows(self, suite: str) -> bool:
        """The ``bfcl-*`` suites."""
        return by_suite(suite) is not None

    def figures(self, suite: str, tests: Sequence[JudgedTest]) -> dict[str, Figure]:
        """The category's accuracy: the share of its entries judged right (an errored one is wrong)."""
        right = sum(1 for t in tests if not t.errored and t.score >= 1)
        return {ACCURACY: Figure(value=right / len(tests) if tests else 0.0, count=len(tests))}

    def rows(self, measured: Mapping[str, Mapping[str, Figure]]) -> list[ScoreRow]:
        """BFCL's table, from each category's accuracy."""
        accuracy = {c.name: measured.get(c.suite, {}).get(ACCURACY) for c in (*SINGLE_TURN, *MULTI_TURN)}

        def of(*names: str) -> list[Figure | None]:
            return [accuracy[n] for n in names]

        simple = mean_figure(of("simple_python", "simple_java", "simple_javascript"))
        non_live = [simple, *of("multiple", "parallel", "parallel_multiple")]
        live = of("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
        rows = [ScoreRow("Non-live AST (unweighted mean)", mean_figure(non_live)), ScoreRow("Simple", simple, 1)]
        rows += [ScoreRow(_LABELS[n], accuracy[n], 2) for n in ("simple_python", "simple_java", "simple_javascript")]
        rows += [ScoreRow(_LABELS[n], accuracy[n], 1) for n in ("multiple", "parallel", "parallel_multiple")]
        rows.append(ScoreRow("Live AST (weighted by entries)", mean_figure(live, weighted=True)))
        names = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
        rows += [ScoreRow(_LABELS[n], accuracy[n], 1) for n in names]
        irrelevance = mean_figure(of("irrelevance", "live_irrelevance"))
        rows.append(ScoreRow("Irrelevance (unweighted mean)", irrelevance))
        rows += [ScoreRow(f"{_LABELS[n]} ({'live' if 'live' in n else 'non-live'})", accuracy[n], 1)
                 for n in ("irrelevance", "live_irrelevance")]  # fmt: skip
        rows.append(ScoreRow("Relevance (live)", accuracy["live_relevance"]))
        multi = [c.name for c in MULTI_TURN]
        rows.append(ScoreRow("Multi turn (unweighted mean)", mean_figure(of(*multi))))
        rows += [ScoreRow(_LABELS[n], accuracy[n], 1) for n in multi]
        return rows

    def notes(self) -> list[str]:
        """How this differs from a leaderboard run (docs/measurement.md)."""
        return [
            "requests as BFCL's function-calling mode sends them; sampling as tsuka sent it (see the profiles' "
            "sampling: BFCL's own runs send temperature 0.001 and no token limit)",
            "judged as BFCL's AST checker judges, but an answer cut at the token limit fails, and on irrelevance a "
            "call in the text or one whose arguments do not parse counts as a call (BFCL counts no call)",
            "multi-turn: every call executed in BFCL's own classes, judged after each turn as BFCL's multi-turn "
            "checker judges (its state and response checks); tsuka runs no name that is not one of their methods",
        ]
