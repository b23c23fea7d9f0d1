"""The record and status of a level written before the history kept only keys and the record: read from its columns.

Layouts 1 to 5 kept a level's figures in columns of their own (``tier``,
``scores``, ``tokens_per_second``...); layout 5 added the record beside them.
Upgrading a file to layout 6 fills each level's record from its columns when it
has none, and its status from ``complete`` and ``tier``; a file of an older
layout opened read-only is read the same way. A value of the wrong kind is
kept in the record as found, where the reader names it as damage.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from tsuka_core.engine.results import UNMEASURED
from tsuka_core.textsafe import loads as safe_loads

__all__ = ["COMPLETE", "PARTIAL", "STATUSES", "UNMEASURED", "column", "columns_record", "columns_status"]

COMPLETE = "complete"
"""Every test of the level was measured."""
PARTIAL = "partial"
"""Some tests were measured and some ended in error: the level has scores but no tier to rely on."""
STATUSES = (COMPLETE, PARTIAL, UNMEASURED)
"""A level's ``status`` in the history, from layout 6; ``unmeasured`` (``engine.results.UNMEASURED``, the word
shown for its tier too): no test was measured, a server that was down, say."""


def column(row: sqlite3.Row, name: str) -> Any:
    """``row[name]``, or None when the row comes from a file of an older layout, opened read-only, that lacks it."""
    return row[name] if name in row.keys() else None  # noqa: SIM118  (`in row` looks among the values)


def columns_status(row: sqlite3.Row) -> str:
    """The level's status as its ``complete`` and ``tier`` columns said it (layouts 1 to 5)."""
    if row["complete"]:
        return COMPLETE
    return UNMEASURED if row["tier"] == UNMEASURED else PARTIAL


def columns_record(row: sqlite3.Row, run: sqlite3.Row) -> Any:
    """The level's record as a JSON value: the one written (layout 5), else what its columns and its run say.

    Layouts before 5 kept no ``testResults``, intervals, sampling source or speed source: the record lacks them.
    """
    written = column(row, "record")
    if written is not None:
        return safe_loads(written)
    extra = _loaded(row["extra"])
    repeats = column(row, "repeats")
    values: dict[str, Any] = {
        "model": row["model"],
        "provider": column(row, "provider") or run["provider"],
        "tier": None if row["tier"] == UNMEASURED else row["tier"],
        "scores": _loaded(row["scores"]),
        "tokensPerSecond": row["tokens_per_second"],
        "benchmarkVersion": run["benchmark_version"],
        "testsHash": run["suite_hash"],
        "reasoningEffort": row["effort"],
        "avgCompletionTokens": row["avg_completion_tokens"],
        "backend": column(row, "backend") or run["backend"],
        "effortApplied": bool(row["effort_applied"]),
        "sampling": _sent(extra.get("sampling")) if isinstance(extra, dict) else None,
        "repeats": repeats if repeats != 1 else None,
        "usageEstimated": True if row["usage_estimated"] else None,
    }
    return {k: v for k, v in values.items() if v is not None}


def _loaded(text: Any) -> Any:
    """The JSON in a column; the text as found when it is not JSON (the reader names it as damage)."""
    try:
        return safe_loads(text)
    except (ValueError, TypeError):
        return text


def _sent(sampling: object) -> dict[str, Any] | None:
    """The sampling a level of an older layout kept in ``extra``, settings left to the server (None) left out."""
    if not isinstance(sampling, dict):
        return None
    return {str(k): v for k, v in sampling.items() if v is not None}
