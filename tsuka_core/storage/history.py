"""The run history: one SQLite file recording every run, request, answer and check outcome.

Layout (``PRAGMA user_version`` is :data:`SCHEMA_VERSION`)::

    runs       one row per run or rescore: suite hash, backend, redacted base URL, models, efforts, options
    levels     one row per model@effort measured: tier, scores, speed, whether it was stored and recommended,
               and ``repeats``, how many times each test was run (``--repeats``)
    tests      one row per run of a test of a level: ``repeat`` (which run, from 1), score, status, error,
               the tools offered; ``position`` is the row's order in the level (test by test, runs in order)
    steps      one row per step: the messages sent, the answer (reasoning apart), usage and duration
    checks     one row per check: type, weight, outcome and detail
    responses  the response cache (``tsuka_core.storage.cache``), keyed by a hash of the request

A run is written one model at a time, each in one transaction, so a crash loses
at most the model in flight. No API key is ever written: base URLs are stored
as :func:`~tsuka_core.common.redact_url` leaves them.

A file of an older layout is upgraded in place, in one transaction, the first
time it is opened for writing (layout 1 gains ``levels.repeats`` and
``tests.repeat``, every existing row reading 1); opened read-only, it is read
as it is, a column it lacks reading as its default.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tsuka_core.common import format_tested_at, redact_url
from tsuka_core.engine.results import UNMEASURED, LevelResult, StepResult, TestResult
from tsuka_core.errors import StoreError
from tsuka_core.storage.answer_json import bounded_response_json, response_from_json, response_to_json
from tsuka_core.textsafe import scrub_text

__all__ = [
    "HISTORY_ENV",
    "SCHEMA_VERSION",
    "RunInfo",
    "RunRecorder",
    "connect",
    "default_history_path",
    "dumps",
    "response_from_json",
    "response_to_json",
    "safe_options",
]

SCHEMA_VERSION = 2
"""The layout written by this engine; a file with a higher version is refused, never rewritten.

1: the first layout. 2: ``levels.repeats`` and ``tests.repeat`` (``--repeats``).
"""

LOCK_TIMEOUT = 30.0
"""Seconds a write waits for another process's transaction on the history (read when a file is opened)."""

HISTORY_ENV = "TSUKA_HISTORY"
"""Environment variable naming the history file when ``--history-db`` is not given."""

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
    source_run INTEGER REFERENCES runs(id)
);
CREATE TABLE levels (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    effort TEXT NOT NULL,
    effort_applied INTEGER NOT NULL,
    complete INTEGER NOT NULL,
    tier TEXT NOT NULL,
    scores TEXT NOT NULL,
    tokens_per_second REAL NOT NULL,
    avg_completion_tokens INTEGER NOT NULL,
    usage_estimated INTEGER NOT NULL,
    stored INTEGER NOT NULL,
    recommended INTEGER NOT NULL,
    extra TEXT NOT NULL,
    notes TEXT NOT NULL,
    repeats INTEGER NOT NULL DEFAULT 1
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
    cached INTEGER NOT NULL
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

_UPGRADES: dict[int, tuple[str, ...]] = {
    1: (
        "ALTER TABLE levels ADD COLUMN repeats INTEGER NOT NULL DEFAULT 1",
        "ALTER TABLE tests ADD COLUMN repeat INTEGER NOT NULL DEFAULT 1",
    ),
}
"""The statements that take a file from layout N to N + 1, keeping every row (new columns get their default)."""

_SECRET_OPTION = re.compile(r"(^|[_-])(key|apikey|token|secret|password|passwd|auth\w*|credentials?)$", re.IGNORECASE)


def default_history_path(store_path: Path) -> Path:
    """``$TSUKA_HISTORY`` when set, else ``.tsuka/history.sqlite`` in the profile store's folder."""
    named = os.environ.get(HISTORY_ENV)
    return Path(named).expanduser() if named else Path(store_path).parent / ".tsuka" / "history.sqlite"


def _now() -> str:
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
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, timeout=LOCK_TIMEOUT, isolation_level=None)
        else:
            uri = f"{path.resolve().as_uri()}?mode=ro"
            db = sqlite3.connect(uri, uri=True, timeout=LOCK_TIMEOUT, isolation_level=None)
        db.row_factory = sqlite3.Row
        db.text_factory = _text
        db.execute("PRAGMA foreign_keys = ON")
        _migrate(db, path, create)
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
        statements = [s for s in _SCHEMA.split(";") if s.strip()]
    else:
        statements = [s for step in range(version, SCHEMA_VERSION) for s in _UPGRADES[step]]
    for statement in statements:
        db.execute(statement)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


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


# --- writing a run --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunInfo:
    """What a history row says about a run before any model is measured."""

    suite_path: str
    suite_hash: str
    backend: str
    provider: str
    models: Sequence[str]
    efforts: Sequence[str]
    options: Mapping[str, Any]
    kind: str = "run"
    source_run: int | None = None


def safe_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with the value of every key that looks like a credential replaced by ``***``."""
    return {k: "***" if _SECRET_OPTION.search(k) and v else v for k, v in options.items()}


class RunRecorder:
    """Writes one run into the history: the run row first, then each model in one transaction, then the end."""

    def __init__(self, path: Path, info: RunInfo) -> None:
        from tsuka_core.storage.store import BENCHMARK_VERSION

        self.path = Path(path)
        with transaction(self.path) as db:
            cursor = db.execute(
                "INSERT INTO runs (kind, status, started_at, suite_path, suite_hash, benchmark_version, backend,"
                " provider, models, efforts, options, source_run) VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    info.kind,
                    _now(),
                    info.suite_path,
                    info.suite_hash,
                    BENCHMARK_VERSION,
                    info.backend,
                    redact_url(info.provider),
                    dumps(list(info.models)),
                    dumps(list(info.efforts)),
                    dumps(dict(info.options)),
                    info.source_run,
                ),
            )
        self.run_id = int(cursor.lastrowid or 0)

    def record_levels(
        self,
        levels: Sequence[LevelResult],
        *,
        stored: Sequence[str] = (),
        recommended: str | None = None,
        notes: Sequence[str] = (),
        cached: frozenset[int] = frozenset(),
    ) -> None:
        """Write one model's levels, in one transaction.

        ``stored`` names the efforts written to the profile store, ``recommended``
        the effort recommended, ``cached`` the ``id()`` of answers served from the cache.
        """
        with transaction(self.path) as db:
            for level in levels:
                _write_level(db, self.run_id, level, level.effort in stored, level.effort == recommended, notes, cached)

    def finish(self, status: str) -> None:
        """Mark the run ended (``ok``, ``failed`` or ``interrupted``)."""
        with transaction(self.path) as db:
            db.execute("UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", (status, _now(), self.run_id))


def _write_level(
    db: sqlite3.Connection,
    run_id: int,
    level: LevelResult,
    stored: bool,
    recommended: bool,
    notes: Sequence[str],
    cached: frozenset[int],
) -> None:
    cursor = db.execute(
        "INSERT INTO levels (run_id, model, effort, effort_applied, complete, tier, scores, tokens_per_second,"
        " avg_completion_tokens, usage_estimated, stored, recommended, extra, notes, repeats)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            run_id,
            level.model,
            level.effort,
            level.effort_applied,
            level.complete,
            level.tier if level.complete or any(t.status == "ok" for t in level.tests) else UNMEASURED,
            dumps(dict(level.scores)),
            level.tokens_per_second,
            level.avg_completion_tokens,
            level.usage_estimated,
            stored,
            recommended,
            dumps(dict(level.extra)),
            dumps(list(notes)),
            level.repeats,
        ),
    )
    level_id = cursor.lastrowid
    for position, test in enumerate(level.tests):
        _write_test(db, level_id, position, test, cached)


def _write_test(
    db: sqlite3.Connection, level_id: int | None, position: int, test: TestResult, cached: frozenset[int]
) -> None:
    cursor = db.execute(
        "INSERT INTO tests (level_id, position, name, file, category, weight, tools, status, score, error, repeat)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            level_id,
            position,
            test.test.name,
            test.test.file,
            test.test.category,
            test.test.weight,
            dumps([dict(t) for t in test.test.tools]),
            test.status,
            test.score,
            None if test.error is None else scrub_text(test.error),
            test.repeat,
        ),
    )
    for step in test.steps:
        _write_step(db, cursor.lastrowid, step, cached)


def _write_step(db: sqlite3.Connection, test_id: int | None, step: StepResult, cached: frozenset[int]) -> None:
    response = bounded_response_json(step.response)[0] if step.response is not None else None
    from_cache = step.response is not None and id(step.response) in cached
    cursor = db.execute(
        "INSERT INTO steps (test_id, idx, sent, messages, response, cached) VALUES (?, ?, ?, ?, ?, ?)",
        (test_id, step.index, step.sent, dumps([dict(m) for m in step.messages]), response, from_cache),
    )
    db.executemany(
        "INSERT INTO checks (step_id, position, location, type, weight, status, detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (cursor.lastrowid, i, c.location, c.type, c.weight, c.outcome.status, scrub_text(c.outcome.detail))
            for i, c in enumerate(step.checks)
        ],
    )
