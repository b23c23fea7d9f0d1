"""Numbers a server reports about itself, kept only when they could be true."""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_TOKEN_COUNT", "token_count"]

MAX_TOKEN_COUNT = 10_000_000
"""The largest token count of one answer taken as reported; a larger one is treated as missing (and estimated)."""


def token_count(value: Any) -> int | None:
    """``value`` as a token count: an integer from 0 to :data:`MAX_TOKEN_COUNT`, else ``None`` (not reported)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value <= MAX_TOKEN_COUNT else None
