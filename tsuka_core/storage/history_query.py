"""Reading runs back from the run history: the list of runs, and one run's levels, tests, steps and checks."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from tsuka_core.errors import StoreError, UsageError
from tsuka_core.record.level import LevelRecord
from tsuka_core.storage.history import connect, response_from_json
from tsuka_core.storage.history_types import (
    StoredCheck,
    StoredLevel,
    StoredRun,
    StoredStep,
    StoredTest,
    StoredTestRuns,
    group_tests,
)
from tsuka_core.storage.history_values import MAX_REPEATS, share, weight
from tsuka_core.storage.level_columns import STATUSES, column, columns_record, columns_status
from tsuka_core.storage.owner import ABANDONED, gone
from tsuka_core.storage.stored_size import within_bounds
from tsuka_core.terms import EFFORTS
from tsuka_core.textsafe import loads as safe_loads

__all__ = [
    "StoredCheck",
    "StoredLevel",
    "StoredRun",
    "StoredStep",
    "StoredTest",
    "StoredTestRuns",
    "group_tests",
    "is_run_ref",
    "list_runs",
    "load_run",
    "run_id",
]


def _ordered(models: Sequence[str], levels: Sequence[StoredLevel]) -> tuple[StoredLevel, ...]:
    """Levels in the run's model order, then cheapest effort first (they are written as models finish)."""

    def key(level: StoredLevel) -> tuple[int, int]:
        name = level.name or level.model
        model = models.index(name) if name in models else len(models)
        effort = EFFORTS.index(level.effort) if level.effort in EFFORTS else len(EFFORTS)
        return model, effort

    return tuple(sorted(levels, key=key))


def _run(row: sqlite3.Row, levels: Sequence[StoredLevel] = ()) -> StoredRun:
    models = _json(row, "models", list)
    return StoredRun(
        id=row["id"],
        kind=row["kind"],
        status=_status(row),
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        suite_path=row["suite_path"],
        suite_hash=row["suite_hash"],
        benchmark_version=row["benchmark_version"],
        backend=row["backend"],
        provider=row["provider"],
        models=models,
        efforts=_json(row, "efforts", list),
        options=_json(row, "options", dict),
        source_run=row["source_run"],
        levels=_ordered(models, levels),
    )


def _status(row: sqlite3.Row) -> str:
    """The run's status; ``abandoned`` for a run left ``running`` by a process that is gone."""
    status: str = row["status"]
    if status == "running" and gone(column(row, "pid"), column(row, "host"), column(row, "process_start")):
        return ABANDONED
    return status


def _json(row: sqlite3.Row, column: str, kind: type) -> Any:
    """The JSON in ``row[column]``, lone surrogates replaced; ValueError when it is not JSON of that ``kind``."""
    value = safe_loads(row[column])
    if not isinstance(value, kind):
        raise ValueError(f"column {column!r} does not hold a JSON {'object' if kind is dict else 'array'}")
    return value


@contextmanager
def _readable(path: Path) -> Iterator[None]:
    """Turn what a history changed by hand makes reading fail with into one StoreError naming the file."""
    try:
        yield
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, sqlite3.Error) as exc:
        reason = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise StoreError(f"{path} is damaged ({type(exc).__name__}: {reason}); it was only read, not changed") from None


def list_runs(path: Path, limit: int | None = None) -> list[tuple[StoredRun, list[StoredLevel]]]:
    """The recorded runs, newest first, each with its levels (without their tests)."""
    with closing(connect(path, create=False)) as db, _readable(path):
        rows = db.execute("SELECT * FROM runs ORDER BY id DESC LIMIT ?", (-1 if limit is None else limit,)).fetchall()
        found = [_run(row, [_level(db, lv, row, deep=False) for lv in _level_rows(db, row["id"])]) for row in rows]
        return [(run, list(run.levels)) for run in found]


_BACK = re.compile(r"(?:last|latest)(?:~([0-9]{1,9}))?")
"""``last`` for the newest run, ``last~N`` for the N-th run before the newest."""


_NUMBER = re.compile(r"[0-9]+")
MAX_RUN_ID = 2**63 - 1
"""The largest id SQLite can give a run: a larger number names no run."""


def is_run_ref(ref: str) -> bool:
    """Whether ``ref`` is written as a run reference: a number, ``last`` or ``last~N``."""
    return _NUMBER.fullmatch(ref) is not None or _BACK.fullmatch(ref) is not None


def run_id(path: Path, ref: str) -> int:
    """The id of the run ``ref`` names: a number, ``last`` for the newest run, ``last~N`` the N-th before it."""
    with closing(connect(path, create=False)) as db:
        back = _BACK.fullmatch(ref)
        if back is not None:
            offset = int(back.group(1) or 0)
            row = db.execute("SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?", (offset,)).fetchone()
            if row is None:
                count = db.execute("SELECT count(*) FROM runs").fetchone()[0]
                if not count:
                    raise UsageError(f"no runs recorded in {path} yet")
                raise UsageError(f"no run {ref!r} in {path}: only {count} run(s) recorded ('tsuka runs' lists them)")
            return int(row[0])
        number = int(ref) if _NUMBER.fullmatch(ref) else -1
        if not 0 <= number <= MAX_RUN_ID or db.execute("SELECT 1 FROM runs WHERE id = ?", (number,)).fetchone() is None:
            raise UsageError(f"no run {ref!r} in {path} ('tsuka runs' lists them)")
        return number


def load_run(path: Path, ref: str | int) -> StoredRun:
    """Run ``ref`` (an id, ``last`` or ``last~N``) with every level, test, step and check."""
    number = ref if isinstance(ref, int) else run_id(path, ref)
    with closing(connect(path, create=False)) as db, _readable(path):
        row = db.execute("SELECT * FROM runs WHERE id = ?", (number,)).fetchone()
        if row is None:
            raise UsageError(f"no run {number} in {path} ('tsuka runs' lists them)")
        return _run(row, tuple(_level(db, lv, row, deep=True) for lv in _level_rows(db, number)))


def _level_rows(db: sqlite3.Connection, number: int) -> list[sqlite3.Row]:
    return db.execute("SELECT * FROM levels WHERE run_id = ? ORDER BY id", (number,)).fetchall()


def _level(db: sqlite3.Connection, row: sqlite3.Row, run: sqlite3.Row, *, deep: bool) -> StoredLevel:
    """One level row; where a file of an older layout has no name, endpoint, backend or provider, the run's."""
    tests = db.execute("SELECT * FROM tests WHERE level_id = ? ORDER BY position", (row["id"],)).fetchall()
    return StoredLevel(
        model=row["model"],
        effort=row["effort"],
        record=_record(row, run),
        status=_level_status(row),
        stored=bool(row["stored"]),
        recommended=bool(row["recommended"]),
        notes=_json(row, "notes", list),
        tests=tuple(_test(db, t) for t in tests) if deep else (),
        name=column(row, "name") or row["model"],
        endpoint=column(row, "endpoint"),
        backend=column(row, "backend") or run["backend"],
        provider=column(row, "provider") or run["provider"],
    )


def _record(row: sqlite3.Row, run: sqlite3.Row) -> LevelRecord:
    """The level's record; ValueError naming a field that is not of its kind (no run could have written it)."""
    found = columns_record(row, run)
    record = LevelRecord.parse(found)
    if not record.is_object:
        raise ValueError("a level's record is not a JSON object")
    scores = found.get("scores")
    if isinstance(scores, dict) and len(scores) != len(record.scores or {}):
        raise ValueError(f"a level's record holds {str(scores)[:60]!r} as scores, not scores from 0 to 1")
    if record.damaged:
        name, value = next(iter(record.damaged.items()))
        raise ValueError(f"a level's record holds {str(value)[:40]!r} as {name}, which no run writes")
    if record.repeats is not None and not 1 <= record.repeats <= MAX_REPEATS:
        raise ValueError(f"a level's record holds {record.repeats} as repeats, not a number from 1 to {MAX_REPEATS}")
    return record


def _level_status(row: sqlite3.Row) -> str:
    """``complete``, ``partial`` or ``unmeasured``: the status column (layout 6 on), else what the columns say."""
    status = column(row, "status")  # NOT NULL from layout 6: None only where the column is not there yet
    if status is None:
        return columns_status(row)
    if status not in STATUSES:
        raise ValueError(f"a level's status holds {str(status)[:40]!r}, not one of {', '.join(STATUSES)}")
    return str(status)


def _test(db: sqlite3.Connection, row: sqlite3.Row) -> StoredTest:
    within_bounds(db, row["id"])
    steps = db.execute("SELECT * FROM steps WHERE test_id = ? ORDER BY id", (row["id"],)).fetchall()
    return StoredTest(
        name=row["name"],
        file=row["file"],
        category=row["category"],
        weight=weight(row["weight"], "tests.weight"),
        tools=_json(row, "tools", list),
        status=_status(row),
        score=share(row["score"], "tests.score"),
        error=row["error"],
        steps=tuple(_step(db, s) for s in steps),
        repeat=_count(row, "repeat"),
    )


def _count(row: sqlite3.Row, name: str) -> int:
    """``row[name]`` (1 to MAX_REPEATS), or 1 when the row comes from a file of layout 1 that lacks the column."""
    if name not in row.keys():  # noqa: SIM118  (`in row` looks among the values)
        return 1
    value = row[name]
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_REPEATS:
        raise ValueError(f"{name} holds {str(value)[:40]!r}, not a whole number from 1 to {MAX_REPEATS}")
    return value


def _check(row: sqlite3.Row) -> StoredCheck:
    text = {column: row[column] for column in ("location", "type", "status", "detail")}
    if not all(isinstance(value, str) for value in text.values()):
        raise ValueError("a check's location, type, status or detail is not text")
    return StoredCheck(weight=weight(row["weight"], "checks.weight"), **text)


def _step(db: sqlite3.Connection, row: sqlite3.Row) -> StoredStep:
    checks = db.execute("SELECT * FROM checks WHERE step_id = ? ORDER BY position", (row["id"],)).fetchall()
    answer = _json(row, "response", dict) if row["response"] is not None else None
    return StoredStep(
        index=row["idx"],
        sent=bool(row["sent"]),
        messages=_json(row, "messages", list),
        response=response_from_json(answer) if answer is not None else None,
        cut=answer is not None and "cut" in answer,
        cached=bool(row["cached"]),
        checks=tuple(_check(c) for c in checks),
        fault=fault if isinstance(fault := column(row, "fault"), str) else None,
    )
