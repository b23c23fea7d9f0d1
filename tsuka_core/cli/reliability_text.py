"""How pass^k looks in a terminal: pass^1 and pass^n per category, and the tests that passed only some runs."""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text

from tsuka_core.engine.reliability import Reliability

__all__ = ["pass_hat_span", "reliability_lines"]


def _percent(value: float) -> str:
    return f"{round(value * 100)}%"


def pass_hat_span(found: Reliability, category: str) -> str:
    """``pass^1 50% pass^4 0%`` for one category; empty when it has no tests."""
    first, last = found.at(category, 1), found.at(category, found.runs)
    if first is None or last is None:
        return ""
    return f"pass^1 {_percent(first)} pass^{found.runs} {_percent(last)}"


def reliability_lines(found: Reliability | None, indent: str = "  ") -> Iterable[Text]:
    """The pass^1 and pass^n of each category, then the flaky tests by name (plain text, never markup)."""
    if found is None:
        return
    spans = "  ".join(f"{c} {pass_hat_span(found, c)}" for c in found.by_category)
    yield Text(f"{indent}reliability over {found.runs} runs: {spans}")
    if found.flaky:
        yield Text(f"{indent}flaky (passed some runs, failed others): {', '.join(found.flaky)}", style="yellow")
