"""Numbers a server reports about itself, kept only when they could be true."""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_MILLIS", "MAX_TOKEN_COUNT", "millis", "token_count"]

MAX_MILLIS = 1e12
"""The longest time (in milliseconds, about 31 years) taken as reported; a longer one is treated as missing."""

MAX_TOKEN_COUNT = 10_000_000
"""The largest token count of one answer taken as reported; a larger one is treated as missing (and estimated)."""


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
