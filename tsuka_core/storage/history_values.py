"""Numbers read back from the run history, taken only when a run could have written them."""

from __future__ import annotations

import math
from typing import Any

from tsuka_core.suite.testfile import MAX_WEIGHT

__all__ = ["MAX_REPEATS", "share", "weight"]

MAX_REPEATS = 1000
"""The most runs of one test a level may have recorded (``--repeats`` takes up to 100)."""


def _number(value: Any, column: str, low: float, high: float) -> float:
    """``value`` as a float from ``low`` to ``high``; ValueError naming ``column`` otherwise (NaN, 1e308, text)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{column} holds {str(value)[:40]!r}, not a number")
    if isinstance(value, int) and not low <= value <= high:  # checked before float(), which 10**400 overflows
        raise ValueError(f"{column} holds a {len(str(abs(value)))}-digit number, not a number from {low:g} to {high:g}")
    number = float(value)
    if not (math.isfinite(number) and low <= number <= high):
        raise ValueError(f"{column} holds {number:.6g}, not a number from {low:g} to {high:g}")
    return number


def share(value: Any, column: str) -> float:
    """A score: a number from 0 to 1."""
    return _number(value, column, 0.0, 1.0)


def weight(value: Any, column: str) -> float:
    """A test's or a check's weight, as a suite may give it (at most ``MAX_WEIGHT``)."""
    return _number(value, column, 0.0, MAX_WEIGHT)
