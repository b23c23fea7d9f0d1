"""Writing a run into the history: the run row first, then each model in one transaction, then its end."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tsuka_core.engine.results import LevelResult, StepResult, TestResult
from tsuka_core.masking import masked_options
from tsuka_core.record.level import LevelRecord
from tsuka_core.storage.answer_json import bounded_response_json
from tsuka_core.storage.history import dumps, now, transaction
from tsuka_core.storage.level_columns import COMPLETE, PARTIAL, UNMEASURED
from tsuka_core.storage.owner import this_process
from tsuka_core.textsafe import scrub_text
from tsuka_core.urls import redact_url

__all__ = ["RunInfo", "RunRecorder", "safe_options"]


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
    """``options`` with every secret value masked: by its key's name or by its looks (``masking.secret_option``)."""
    return masked_options(options)


class RunRecorder:
    """Writes one run into the history: the run row first, then each model in one transaction, then the end."""

    def __init__(self, path: Path, info: RunInfo) -> None:
        from tsuka_core.storage.store import BENCHMARK_VERSION

        self.path = Path(path)
        with transaction(self.path) as db:
            cursor = db.execute(
                "INSERT INTO runs (kind, status, started_at, suite_path, suite_hash, benchmark_version, backend,"
                " provider, models, efforts, options, source_run, pid, host, process_start)"
                " VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    info.kind,
                    now(),
                    info.suite_path,
                    info.suite_hash,
                    BENCHMARK_VERSION,
                    info.backend,
                    redact_url(info.provider),
                    dumps(list(info.models)),
                    dumps(list(info.efforts)),
                    dumps(dict(info.options)),
                    info.source_run,
                    *this_process(),
                ),
            )
        self.run_id = int(cursor.lastrowid or 0)

    def record_levels(
        self,
        levels: Sequence[LevelResult],
        records: Sequence[LevelRecord],
        *,
        stored: Sequence[str] = (),
        recommended: str | None = None,
        notes: Sequence[str] = (),
        cached: frozenset[int] = frozenset(),
        name: str | None = None,
    ) -> None:
        """Write one model's levels with their records (``records[i]`` of ``levels[i]``), in one transaction.

        ``stored`` names the efforts written to the profile store, ``recommended``
        the effort recommended, ``cached`` the ``id()`` of answers served from the cache,
        ``name`` the model's name in the store (default: the model's own); the project
        file's endpoint that answered is each level's own (``LevelResult.endpoint``).
        """
        with transaction(self.path) as db:
            for level, record in zip(levels, records, strict=True):
                flags = (level.effort in stored, level.effort == recommended)
                _write_level(db, self.run_id, (level, record), flags, name, notes, cached)

    def finish(self, status: str) -> None:
        """Mark the run ended (``ok``, ``failed`` or ``interrupted``)."""
        with transaction(self.path) as db:
            db.execute("UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", (status, now(), self.run_id))


def _write_level(
    db: sqlite3.Connection,
    run_id: int,
    measured: tuple[LevelResult, LevelRecord],
    flags: tuple[bool, bool],
    name: str | None,
    notes: Sequence[str],
    cached: frozenset[int],
) -> None:
    """One level row (``flags``: stored, recommended) with its record, then its tests."""
    stored, recommended = flags
    level, record = measured
    cursor = db.execute(
        "INSERT INTO levels (run_id, model, effort, status, stored, recommended, notes, name, endpoint, backend,"
        " provider, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            run_id,
            level.model,
            level.effort,
            _status(level),
            stored,
            recommended,
            dumps(list(notes)),
            name or level.model,
            level.endpoint,
            level.backend or None,
            redact_url(level.provider) if level.provider else None,
            dumps(record.stored()),
        ),
    )
    level_id = cursor.lastrowid
    for position, test in enumerate(level.tests):
        _write_test(db, level_id, position, test, cached)


def _status(level: LevelResult) -> str:
    """``complete``, ``partial`` or ``unmeasured``, as the history keeps it."""
    if level.complete:
        return COMPLETE
    return PARTIAL if level.measured_any else UNMEASURED


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
    response = None if step.response is None else bounded_response_json(step.response, shortened=step.shortened)[0]
    from_cache = step.response is not None and id(step.response) in cached
    cursor = db.execute(
        "INSERT INTO steps (test_id, idx, sent, messages, response, cached, fault) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (test_id, step.index, step.sent, dumps([dict(m) for m in step.messages]), response, from_cache, step.fault),
    )
    db.executemany(
        "INSERT INTO checks (step_id, position, location, type, weight, status, detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (cursor.lastrowid, i, c.location, c.type, c.weight, c.outcome.status, scrub_text(c.outcome.detail))
            for i, c in enumerate(step.checks)
        ],
    )
