"""Numbers a server reports about itself, kept only when they could be true."""

from __future__ import annotations

from typing import Any

from tsuka_core.record.lenient import MAX_COUNT, MAX_MILLIS

__all__ = [
    "MAX_MILLIS",
    "MAX_TOKENS_PER_SECOND",
    "MAX_TOKEN_COUNT",
    "millis",
    "plausible_rate",
    "rate",
    "token_count",
]

MAX_TOKEN_COUNT = MAX_COUNT
"""The largest token count of one answer taken as reported (the record's bound); a larger one is treated as
missing (and estimated)."""


MAX_TOKENS_PER_SECOND = 10_000_000.0
"""The fastest rate taken as reported (far past any server's); a faster one, or tokens in no time, is not
reported. The record takes rates up to ``record.lenient.MAX_RATE``, above this: what is written reads."""


def rate(tokens: float, ms: float) -> float | None:
    """Tokens per second of ``tokens`` in ``ms`` milliseconds; None when no time passed or faster than the bound.

    Computed without dividing by a time that rounds to nothing (``5e-324`` ms is no time, not a rate).
    """
    if not (0 <= tokens <= MAX_COUNT * 1000 and 0 < ms <= MAX_MILLIS * 1000):
        return None
    if tokens > MAX_TOKENS_PER_SECOND * ms / 1000:
        return None
    return tokens * 1000 / ms


def plausible_rate(tokens: int, ms: float) -> bool:
    """Whether ``tokens`` in ``ms`` milliseconds could be true: no tokens, or a rate up to the bound."""
    return tokens == 0 or rate(tokens, ms) is not None


def token_count(value: Any) -> int | None:
    """``value`` as a token count: an integer from 0 to :data:`MAX_TOKEN_COUNT`, else ``None`` (not reported)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value <= MAX_TOKEN_COUNT else None


def millis(value: Any) -> float | None:
    """``value`` as a time in milliseconds: a number from 0 to :data:`MAX_MILLIS` (a day), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 <= value <= MAX_MILLIS else None
