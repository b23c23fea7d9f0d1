"""Timestamps as profiles, histories and reports store them."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["format_tested_at"]


def format_tested_at(moment: datetime) -> str:
    """ISO-8601 in UTC with milliseconds and ``Z`` (``2026-12-02T10:31:05.123Z``); naive times are local."""
    utc = moment.astimezone(UTC)
    return f"{utc:%Y-%m-%dT%H:%M:%S}.{utc.microsecond // 1000:03d}Z"
