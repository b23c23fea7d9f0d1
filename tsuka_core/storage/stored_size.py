"""How much a stored step may hold, checked without reading it: a history tsuka did not write is hostile."""

from __future__ import annotations

import sqlite3

from tsuka_core.backends.http import MAX_BODY_BYTES

__all__ = ["MAX_STORED_STEP_BYTES", "within_bounds"]

MAX_STORED_STEP_BYTES = MAX_BODY_BYTES
"""The most a step's stored answer or messages may hold: the most a live run reads of one answer (tsuka itself
stores an answer cut at 1 MiB), so a larger one was not written by tsuka and is refused before it is read."""


def within_bounds(db: sqlite3.Connection, test_id: int) -> None:
    """ValueError when a step of the test holds more than :data:`MAX_STORED_STEP_BYTES`, measured without reading it.

    SQLite's blob handle gives a text's size from its record header; ``length()`` would read it whole.
    """
    for (step,) in db.execute("SELECT id FROM steps WHERE test_id = ?", (test_id,)).fetchall():
        for column in ("response", "messages"):
            try:
                with db.blobopen("steps", column, step, readonly=True) as value:
                    size = len(value)
            except sqlite3.Error:
                continue  # NULL, or not text: the reader says what is wrong with it
            if size > MAX_STORED_STEP_BYTES:
                raise ValueError(
                    f"a step's {column} holds {size:,} bytes, more than the {MAX_STORED_STEP_BYTES:,} tsuka ever writes"
                )
