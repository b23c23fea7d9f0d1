"""The run history: one SQLite file recording every run, request, answer and check outcome.

Layout (``PRAGMA user_version`` is :data:`SCHEMA_VERSION`)::

    runs       one row per run or rescore: suite hash, backend, redacted base URL, models, efforts, options,
               and the process writing it (``pid``, ``host``, ``process_start``; see ``storage.owner``)
    levels     one row per model@effort measured: its keys, where its answers came from (``name``, the
               model's name in the profile store; ``endpoint``, the project file's endpoint; ``backend`` and
               ``provider``, NULL: the run's), what the run did with it (``status``: ``complete``,
               ``partial`` or ``unmeasured``; whether it was stored and recommended; the run's notes), and
               ``record``, the level's one record as the profile store keeps it (``record.LevelRecord``),
               complete or not: its tier, scores, speed, repeats and every other figure, read from there only
    tests      one row per run of a test of a level: ``repeat`` (which run, from 1), score, status, error,
               the tools offered; ``position`` is the row's order in the level (test by test, runs in order)
    steps      one row per step: the messages sent, the answer (reasoning apart), usage and duration, and
               ``fault``, the failure kind of a failed answer (``engine.answer_faults``; NULL: none or unknown)
    checks     one row per check: type, weight, outcome and detail
    responses  the response cache (``tsuka_core.storage.cache``), keyed by a hash of the request

A run is written one model at a time, each in one transaction, so a crash loses
at most the model in flight. No API key is ever written: base URLs are stored
as :func:`~tsuka_core.urls.redact_url` leaves them.

A file of an older layout is upgraded in place, in one transaction, the first
time it is opened for writing (layout 1 gains ``levels.repeats`` and
``tests.repeat``, every existing row reading 1; layout 2 gains the level's
``name``, ``endpoint``, ``backend`` and ``provider``, every existing row reading
NULL: the run's; layout 3 gains ``steps.fault`` and the run's ``pid``, ``host`` and ``process_start``,
NULL in every existing row: no failure kind, nothing known of its process; layout 4 gains ``levels.record``, the
level's record, NULL in every existing row: the record is then read from the level's columns; layout 5 gains
``levels.status``, and each level without a record gets the one its columns say, before the columns the record
holds are dropped: ``storage.level_columns``); opened read-only, it is read as it is, a column it lacks reading as
its default, a level's record and status as its columns say.

A run across the endpoints of a project file is one run: its row names every
endpoint's backend and provider, and each level names its own.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tsuka_core.errors import StoreError
from tsuka_core.storage.answer_json import response_from_json, response_to_json
from tsuka_core.storage.files import make_folders
from tsuka_core.storage.level_columns import columns_record, columns_status
from tsuka_core.terms import HISTORY_ENV
from tsuka_core.textsafe import scrub_text
from tsuka_core.timestamps import format_tested_at

__all__ = [
    "HISTORY_ENV",
    "SCHEMA_VERSION",
    "connect",
    "default_history_path",
    "dumps",
    "now",
    "response_from_json",
    "response_to_json",
    "transaction",
]

SCHEMA_VERSION = 6
"""The layout written by this engine; a file with a higher version is refused, never rewritten.

1: the first layout. 2: ``levels.repeats`` and ``tests.repeat`` (``--repeats``). 3: ``levels.name``,
``levels.endpoint``, ``levels.backend`` and ``levels.provider`` (one run across several endpoints).
4: ``runs.pid``, ``runs.host`` and ``runs.process_start``: the process writing the run.
5: ``levels.record``: the level's record (``record.LevelRecord``) as JSON, the same the profile store keeps.
6: the level row reduced to its keys, the run's facts about it and its record: ``levels.status`` (``complete``,
``partial``, ``unmeasured``) replaces ``complete`` and the shown ``tier``; the figures the record holds (tier,
scores, speed, tokens, ``effort_applied``, ``usage_estimated``, ``extra``, ``repeats``) are no longer columns.
"""

LOCK_TIMEOUT = 30.0
"""Seconds a write waits for another process's transaction on the history (read when a file is opened)."""

_SCHEMA = """
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    suite_path TEXT NOT NULL,
    suite_hash TEXT NOT NULL,
    benchmark_version INTEGER NOT NULL,
    backend TEXT NOT NULL,
    provider TEXT NOT NULL,
    models TEXT NOT NULL,
    efforts TEXT NOT NULL,
    options TEXT NOT NULL,
    source_run INTEGER REFERENCES runs(id),
    pid INTEGER,
    host TEXT,
    process_start TEXT
);
CREATE TABLE levels (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    effort TEXT NOT NULL,
    stored INTEGER NOT NULL,
    recommended INTEGER NOT NULL,
    notes TEXT NOT NULL,
    name TEXT,
    endpoint TEXT,
    backend TEXT,
    provider TEXT,
    record TEXT NOT NULL,
    status TEXT NOT NULL
);
CREATE INDEX levels_run ON levels(run_id);
CREATE TABLE tests (
    id INTEGER PRIMARY KEY,
    level_id INTEGER NOT NULL REFERENCES levels(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    file TEXT NOT NULL,
    category TEXT NOT NULL,
    weight REAL NOT NULL,
    tools TEXT NOT NULL,
    status TEXT NOT NULL,
    score REAL NOT NULL,
    error TEXT,
    repeat INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX tests_level ON tests(level_id);
CREATE TABLE steps (
    id INTEGER PRIMARY KEY,
    test_id INTEGER NOT NULL REFERENCES tests(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    sent INTEGER NOT NULL,
    messages TEXT NOT NULL,
    response TEXT,
    cached INTEGER NOT NULL,
    fault TEXT
);
CREATE INDEX steps_test ON steps(test_id);
CREATE TABLE checks (
    id INTEGER PRIMARY KEY,
    step_id INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    location TEXT NOT NULL,
    type TEXT NOT NULL,
    weight REAL NOT NULL,
    status TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE INDEX checks_step ON checks(step_id);
CREATE TABLE responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""

_FIGURE_COLUMNS = (
    "effort_applied",
    "complete",
    "tier",
    "scores",
    "tokens_per_second",
    "avg_completion_tokens",
    "usage_estimated",
    "extra",
    "repeats",
)
"""The level columns of layouts 1 to 5 that the record holds (``status``: ``complete`` and ``tier``), dropped in 6."""


def _fill_records(db: sqlite3.Connection) -> None:
    """Give each level its status, and its record where it has none, from its columns (layout 5 to 6)."""
    runs = {row["id"]: row for row in db.execute("SELECT * FROM runs")}
    for row in db.execute("SELECT * FROM levels").fetchall():
        run = runs.get(row["run_id"])
        if run is None:
            continue  # a level whose run is gone (a file edited by hand): no reader reaches it
        record = row["record"] if row["record"] is not None else dumps(columns_record(row, run))
        db.execute("UPDATE levels SET status = ?, record = ? WHERE id = ?", (columns_status(row), record, row["id"]))


_UPGRADES: dict[int, tuple[str | Callable[[sqlite3.Connection], None], ...]] = {
    1: (
        "ALTER TABLE levels ADD COLUMN repeats INTEGER NOT NULL DEFAULT 1",
        "ALTER TABLE tests ADD COLUMN repeat INTEGER NOT NULL DEFAULT 1",
    ),
    2: (
        "ALTER TABLE levels ADD COLUMN name TEXT",
        "ALTER TABLE levels ADD COLUMN endpoint TEXT",
        "ALTER TABLE levels ADD COLUMN backend TEXT",
        "ALTER TABLE levels ADD COLUMN provider TEXT",
    ),
    3: (
        "ALTER TABLE steps ADD COLUMN fault TEXT",
        "ALTER TABLE runs ADD COLUMN pid INTEGER",
        "ALTER TABLE runs ADD COLUMN host TEXT",
        "ALTER TABLE runs ADD COLUMN process_start TEXT",
    ),
    4: ("ALTER TABLE levels ADD COLUMN record TEXT",),
    5: (
        "ALTER TABLE levels ADD COLUMN status TEXT NOT NULL DEFAULT 'complete'",
        _fill_records,
        *(f"ALTER TABLE levels DROP COLUMN {name}" for name in _FIGURE_COLUMNS),
    ),
}
"""What takes a file from layout N to N + 1, keeping every row: statements (new columns get their default), and
steps that fill new columns from old ones."""


def default_history_path(store_path: Path) -> Path:
    """``$TSUKA_HISTORY`` when set, else ``.tsuka/history.sqlite`` in the profile store's folder."""
    named = os.environ.get(HISTORY_ENV)
    return Path(named).expanduser() if named else Path(store_path).parent / ".tsuka" / "history.sqlite"


def now() -> str:
    return format_tested_at(datetime.now(UTC))


def dumps(value: Any) -> str:
    """Compact JSON as the history stores it (non-ASCII as is; what JSON cannot hold, as its text).

    A lone surrogate that reached it some other way than decoded JSON (a plugin's
    own text) is written as U+FFFD: SQLite stores UTF-8, which cannot hold one.
    """
    return scrub_text(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))


def connect(path: Path, *, create: bool = True) -> sqlite3.Connection:
    """Open the history at ``path``, creating or upgrading its layout; a newer or foreign file is refused.

    ``create=False`` opens an existing file read-only and raises StoreError when
    there is none; a file of an older layout is then read as it is, not upgraded
    (readers take a column it lacks as its default).
    """
    path = Path(path)
    if not create and not path.is_file():
        raise StoreError(f"no run history at {path}: 'tsuka run' records one (unless --no-history)")
    try:
        if create:
            make_folders(path.parent)
            db = sqlite3.connect(path, timeout=LOCK_TIMEOUT, isolation_level=None)
        else:
            uri = f"{path.resolve().as_uri()}?mode=ro"
            db = sqlite3.connect(uri, uri=True, timeout=LOCK_TIMEOUT, isolation_level=None)
        db.row_factory = sqlite3.Row
        db.text_factory = _text
        db.execute("PRAGMA foreign_keys = ON")
        _migrate(db, path, create)
        _check_tables(db, path)
    except sqlite3.DatabaseError as exc:
        if _locked(exc):
            raise _unusable(path, exc) from None
        raise StoreError(f"{path} is not a usable tsuka history ({exc}); nothing was written") from None
    except OSError as exc:
        raise StoreError(f"cannot open the run history {path} ({exc.strerror or exc})") from None
    return db


def _text(raw: bytes) -> str:
    """A text column as read: a file edited by hand may hold bytes that are not UTF-8; they read as U+FFFD."""
    return raw.decode("utf-8", errors="replace")


def _migrate(db: sqlite3.Connection, path: Path, create: bool) -> None:
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version == SCHEMA_VERSION:
        return
    if version > SCHEMA_VERSION:
        db.close()
        raise _newer(path, version)
    if not create:
        if version > 0:
            return  # an older layout, read as it is
        db.close()
        raise StoreError(f"{path} is not a tsuka history yet (layout {version}); run 'tsuka run' first")
    db.execute("BEGIN IMMEDIATE")  # two runs creating or upgrading the file at once: the second finds it done
    try:
        _create_or_upgrade(db, path)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        db.close()
        raise


def _create_or_upgrade(db: sqlite3.Connection, path: Path) -> None:
    """Inside the caller's transaction: lay out an empty file, or upgrade an older layout keeping every row."""
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise _newer(path, version)
    if version == 0:
        if db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]:
            raise StoreError(f"{path} holds a database that is not a tsuka history; pass another --history-db")
        statements: list[str | Callable[[sqlite3.Connection], None]] = [s for s in _SCHEMA.split(";") if s.strip()]
    else:
        statements = [s for step in range(version, SCHEMA_VERSION) for s in _UPGRADES[step]]
    for statement in statements:
        if isinstance(statement, str):
            db.execute(statement)
        else:
            statement(db)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


_TABLES = frozenset(re.findall(r"^CREATE TABLE (\w+)", _SCHEMA, re.M))
"""Every table of the layout: a file of the current layout without one of them was changed by hand."""


def _check_tables(db: sqlite3.Connection, path: Path) -> None:
    """StoreError naming the tables a history of this layout lacks (one dropped by hand, say)."""
    if int(db.execute("PRAGMA user_version").fetchone()[0]) != SCHEMA_VERSION:
        return  # an older layout opened read-only: read as it is
    found = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    missing = sorted(_TABLES - found)
    if missing:
        db.close()
        raise StoreError(
            f"{path} is damaged: it has no {', '.join(missing)} table (a history tsuka writes has every one); "
            "nothing was written. Move it aside, or pass another --history-db"
        )


def _newer(path: Path, version: int) -> StoreError:
    return StoreError(
        f"{path} was written by a newer tsuka (history layout {version}, this one reads {SCHEMA_VERSION}); "
        "upgrade tsuka or pass another --history-db"
    )


@contextmanager
def transaction(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection to the history inside one transaction: committed on success, rolled back on error.

    A lock held past :data:`LOCK_TIMEOUT` or a write that fails (a full disk)
    is a StoreError naming the file; the transaction is then rolled back.
    """
    with closing(connect(path)) as db:
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise _unusable(path, exc) from None
        try:
            yield db
            db.execute("COMMIT")
        except BaseException as exc:
            with suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise _unusable(path, exc) from None
            raise


def _locked(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or "locked" in str(exc)


def _unusable(path: Path, exc: sqlite3.Error) -> StoreError:
    """The one-line error for a history that is locked too long or cannot be written."""
    if _locked(exc):
        return StoreError(
            f"the run history {path} is locked by another process for more than {LOCK_TIMEOUT:g} s; "
            "try again when it has finished, or pass --no-history"
        )
    return StoreError(f"cannot write the run history {path} ({exc}); what was written before is kept")
