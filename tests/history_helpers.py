"""Shared by the history, cache, rescore, report and JUnit tests: run the CLI in-process, read the history."""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from tsuka_core.cli.main import cli
from tsuka_core.suite.loading import default_suite_path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SUITE = default_suite_path()
"""The default suite as installed (in a source checkout, ``benchmarks/``): profiles measured with it are the
default suite's."""
CLEAN_ENV: dict[str, str | None] = {
    "OPENAI_BASE_URL": None,
    "OPENAI_API_KEY": None,
    "TSUKA_PROFILES": None,
    "TSUKA_HISTORY": None,
    "TSUKA_LOAD_PLUGINS": None,
}


def invoke(*args: str | os.PathLike[str], env: dict[str, str | None] | None = None) -> Result:
    """Run ``tsuka`` in this process with a clean environment; stdout and stderr kept apart."""
    runner = CliRunner(env={**CLEAN_ENV, **(env or {})})
    return runner.invoke(cli, [str(a) for a in args], catch_exceptions=False, prog_name="tsuka")


def stored(path: Path) -> dict[str, Any]:
    """The profile store as JSON."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def rows(db: Path, sql: str, *params: Any) -> list[sqlite3.Row]:
    """The rows ``sql`` selects from the history file ``db``."""
    with closing(sqlite3.connect(db)) as conn:
        conn.row_factory = sqlite3.Row
        return conn.execute(sql, params).fetchall()


def history_of(store: Path) -> Path:
    """The default history file beside the profile store ``store``."""
    return store.parent / ".tsuka" / "history.sqlite"


def without_tested_at(profiles: dict[str, Any]) -> dict[str, Any]:
    """Profiles with ``testedAt`` (the one field that differs between two identical runs) removed."""
    return {k: {f: v for f, v in p.items() if f != "testedAt"} for k, p in profiles.items()}


FIGURE_COLUMNS = {
    "effort_applied": "INTEGER NOT NULL DEFAULT 1",
    "complete": "INTEGER NOT NULL DEFAULT 1",
    "tier": "TEXT NOT NULL DEFAULT ''",
    "scores": "TEXT NOT NULL DEFAULT '{}'",
    "tokens_per_second": "REAL NOT NULL DEFAULT 0",
    "avg_completion_tokens": "INTEGER NOT NULL DEFAULT 0",
    "usage_estimated": "INTEGER NOT NULL DEFAULT 0",
    "extra": "TEXT NOT NULL DEFAULT '{}'",
    "repeats": "INTEGER NOT NULL DEFAULT 1",
}
"""The level columns layouts 1 to 5 kept the figures in (layout 6 reads them from the record)."""

FROM_RECORD = {
    "effort_applied": "coalesce(json_extract(record, '$.effortApplied'), 1)",
    "complete": "status = 'complete'",
    "tier": "CASE status WHEN 'unmeasured' THEN 'unmeasured' ELSE json_extract(record, '$.tier') END",
    "scores": "json_extract(record, '$.scores')",
    "tokens_per_second": "json_extract(record, '$.tokensPerSecond')",
    "avg_completion_tokens": "json_extract(record, '$.avgCompletionTokens')",
    "usage_estimated": "coalesce(json_extract(record, '$.usageEstimated'), 0)",
    "extra": "json_object('sampling', json(coalesce(json_extract(record, '$.sampling'), '{}')))",
    "repeats": "coalesce(json_extract(record, '$.repeats'), 1)",
}
"""Each figure column as a level of layout 5 held it, from a layout 6 row's record and status."""


def with_figure_columns(conn: sqlite3.Connection) -> None:
    """Give the levels of a layout 6 file the figure columns of layouts 1 to 5, as those layouts wrote them, and
    drop ``status`` (a file of layout 5, but for ``user_version``)."""
    for name, kind in FIGURE_COLUMNS.items():
        conn.execute(f"ALTER TABLE levels ADD COLUMN {name} {kind}")
    conn.execute(f"UPDATE levels SET {', '.join(f'{n} = {e}' for n, e in FROM_RECORD.items())}")
    conn.execute("ALTER TABLE levels DROP COLUMN status")
