"""A level row is its keys, what the run did with it, and its record: layout 6, and files of layout 5 upgraded to it."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from answerers import by_model, failing, perfect, which_test
from history_helpers import FIGURE_COLUMNS, history_of, invoke, rows, with_figure_columns
from loopback import LoopbackServer, Reply

from tsuka_core.storage.history import SCHEMA_VERSION, connect
from tsuka_core.storage.history_query import StoredRun, list_runs, load_run

pytestmark = pytest.mark.usefixtures("fast_retries")

LEVEL_COLUMNS = {
    "id", "run_id", "model", "effort", "stored", "recommended", "notes", "name", "endpoint", "backend", "provider",
    "record", "status",
}  # fmt: skip
"""Every column of a level row in layout 6: nothing the record holds."""
STATUSES = {"whole": "complete", "half": "partial", "down": "unmeasured"}


def one_failing(body: dict[str, Any], n: int) -> Reply:
    """Right everywhere but in ``frase_8_parole``, whose requests fail."""
    return failing()(body, n) if which_test(body)[0] == "frase_8_parole" else perfect(body, n)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A history of one run: a complete level, a partial one and an unmeasured one."""
    store = tmp_path_factory.mktemp("levels") / "models_profile.json"
    answers = by_model({"whole": perfect, "half": one_failing, "down": failing()})
    with LoopbackServer(answers, models=list(STATUSES)) as server:
        ran = invoke("run", *STATUSES, "--base-url", server.base_url, "--profiles", store, "-e", "none",
                     "--retries", "0")  # fmt: skip
    assert ran.exit_code != 0  # two levels gave no tier
    return history_of(store)


def as_layout_5(source: Path, target: Path, *, without_record: str) -> None:
    """``source`` as layout 5 wrote it: the figure columns beside the record; ``without_record``'s level has none
    (as a level written before layout 5 and upgraded)."""
    shutil.copyfile(source, target)
    with closing(sqlite3.connect(target)) as db:
        with_figure_columns(db)
        db.execute("ALTER TABLE levels ADD COLUMN kept TEXT")  # layout 5 added the record, NULL in older rows
        db.execute("UPDATE levels SET kept = record WHERE model != ?", (without_record,))
        db.execute("ALTER TABLE levels DROP COLUMN record")
        db.execute("ALTER TABLE levels RENAME COLUMN kept TO record")
        db.execute("PRAGMA user_version = 5")
        db.commit()


def figures(run: StoredRun) -> dict[str, tuple[Any, ...]]:
    """What the readers take from each level: status, shown tier, scores, speed, tokens, repeats, effort applied."""
    return {
        level.key: (
            level.status, level.tier, dict(level.scores), level.record.tokens_per_second,
            level.record.avg_completion_tokens, level.repeats, level.record.effort_applied, level.record.model,
        )
        for level in run.levels
    }  # fmt: skip


def test_a_level_row_holds_its_keys_status_and_record_only(recorded: Path) -> None:
    assert rows(recorded, "PRAGMA user_version")[0][0] == SCHEMA_VERSION == 6
    assert {r[1] for r in rows(recorded, "PRAGMA table_info(levels)")} == LEVEL_COLUMNS
    statuses = {r["model"]: r["status"] for r in rows(recorded, "SELECT model, status FROM levels")}
    assert statuses == STATUSES
    run = load_run(recorded, 1)
    assert {lv.model: lv.tier for lv in run.levels} == {"whole": "large", "half": "medium", "down": "unmeasured"}
    assert {lv.model: lv.complete for lv in run.levels} == {"whole": True, "half": False, "down": False}
    shown = invoke("runs", "--history-db", recorded)
    assert "whole@none large" in shown.stdout
    assert "down@none unmeasured" in shown.stdout


@pytest.mark.parametrize("without_record", list(STATUSES))
def test_a_layout_5_file_is_read_as_it_is_then_upgraded_keeping_every_figure(
    recorded: Path, tmp_path: Path, without_record: str
) -> None:
    old = tmp_path / "old.sqlite"
    as_layout_5(recorded, old, without_record=without_record)
    original = figures(load_run(recorded, 1))
    records = {r["model"]: r["record"] for r in rows(old, "SELECT model, record FROM levels")}
    counts = {t: rows(old, f"SELECT count(*) FROM {t}")[0][0] for t in ("runs", "levels", "tests", "steps", "checks")}
    before = old.read_bytes()

    assert figures(load_run(old, 1)) == original
    assert [lv.tier for _, levels in list_runs(old) for lv in levels] == [lv[1] for lv in original.values()]
    assert old.read_bytes() == before, "reading upgraded the file"

    with closing(connect(old)):
        pass

    assert rows(old, "PRAGMA user_version")[0][0] == SCHEMA_VERSION
    assert {r[1] for r in rows(old, "PRAGMA table_info(levels)")} == LEVEL_COLUMNS
    assert not LEVEL_COLUMNS & set(FIGURE_COLUMNS)
    assert {t: rows(old, f"SELECT count(*) FROM {t}")[0][0] for t in counts} == counts
    upgraded = {r["model"]: r["record"] for r in rows(old, "SELECT model, record FROM levels")}
    assert {m: r for m, r in upgraded.items() if m != without_record} == {
        m: r for m, r in records.items() if m != without_record
    }, "a written record is kept as written"
    assert figures(load_run(old, 1)) == original
    assert invoke("show", "1", "--history-db", old).exit_code == 0
