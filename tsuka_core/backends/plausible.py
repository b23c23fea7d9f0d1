"""Numbers a server reports about itself, kept only when they could be true."""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_MILLIS", "MAX_TOKENS_PER_SECOND", "MAX_TOKEN_COUNT", "millis", "plausible_rate", "token_count"]

MAX_MILLIS = 1e12
"""The longest time (in milliseconds, about 31 years) taken as reported; a longer one is treated as missing."""

MAX_TOKEN_COUNT = 10_000_000
"""The largest token count of one answer taken as reported; a larger one is treated as missing (and estimated)."""


MAX_TOKENS_PER_SECOND = 10_000_000.0
"""The fastest rate taken as reported (far past any server's); a faster one, or tokens in no time, is not
reported. The history reads rates up to ``storage.history_values.MAX_RATE``, above this: what is written reads."""


def plausible_rate(tokens: int, ms: float) -> bool:
    """Whether ``tokens`` in ``ms`` milliseconds could be true: no tokens, or a rate up to the bound."""
    return tokens == 0 or (ms > 0 and tokens / (ms / 1000) <= MAX_TOKENS_PER_SECOND)


def token_count(value: Any) -> int | None:
    """``value`` as a token count: an integer from 0 to :data:`MAX_TOKEN_COUNT`, else ``None`` (not reported)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value <= MAX_TOKEN_COUNT else None


def millis(value: Any) -> float | None:
    """``value`` as a time in milliseconds: a number from 0 to :data:`MAX_MILLIS`, else ``None`` (not reported)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 <= value <= MAX_MILLIS else None
