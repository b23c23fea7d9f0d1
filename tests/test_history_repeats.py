"""Repeated tests in the run history: every run recorded, shown and rescored; layout 1 files read and upgraded."""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from answerers import DEFAULT_TESTS, fooled, perfect, which_test
from history_helpers import DEFAULT_SUITE, history_of, invoke, rows, stored, with_figure_columns
from loopback import LoopbackServer, Reply

from tsuka_core.errors import StoreError
from tsuka_core.record import LevelRecord
from tsuka_core.storage import history
from tsuka_core.storage.history import SCHEMA_VERSION, connect
from tsuka_core.storage.history_query import StoredLevel, StoredRun, list_runs, load_run

pytestmark = pytest.mark.usefixtures("fast_retries")

REPEATS = 3
WRONG_SENTENCE = "No, thanks."
"""Fails every check of frase_8_parole: 2 words, wrong first and last word, a comma."""
RIGHT_SENTENCE = "Every morning the fisherman walks beside the river."
SUITE_ORDER = list(DEFAULT_TESTS)

V1_SCHEMA = """
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
    notes TEXT NOT NULL
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
    error TEXT
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
"""The history layout 1, as tsuka wrote it before ``--repeats`` (``PRAGMA user_version = 1``)."""

Answerer = Callable[[dict[str, Any], int], Reply]


def wavering() -> Answerer:
    """Right, except every second time the same request comes (per model and effort).

    Then frase_8_parole gets a sentence failing every check (score 0) and
    catena_tool_distrattori's second step the distractor's id (score 0.63). Run
    three times, each of those tests scores right, wrong, right, in whatever
    order the runs' requests arrive.
    """
    seen: Counter[str] = Counter()
    lock = threading.Lock()

    def answer(body: dict[str, Any], n: int) -> Reply:
        key = json.dumps([body["model"], body.get("reasoning_effort"), body["messages"]], sort_keys=True)
        with lock:
            count = seen[key]
            seen[key] += 1
        name, step = which_test(body)
        if count % 2 == 1 and name == "frase_8_parole":
            return Reply.text(WRONG_SENTENCE)
        if count % 2 == 1 and name == "catena_tool_distrattori" and step == 1:
            return fooled(body, n)
        return perfect(body, n)

    return answer


def every_second_fails(test: str) -> Answerer:
    """Right, except that every second request of ``test`` fails with HTTP 500."""
    seen: Counter[str] = Counter()
    lock = threading.Lock()

    def answer(body: dict[str, Any], n: int) -> Reply:
        name, _ = which_test(body)
        with lock:
            count = seen[name]
            seen[name] += 1
        if name == test and count % 2 == 1:
            return Reply.error(500, "the model crashed")
        return perfect(body, n)

    return answer


@pytest.fixture(scope="module")
def repeated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store of m1 measured with ``--repeats 3`` at none and low by the wavering answerer (run 1)."""
    store = tmp_path_factory.mktemp("repeated") / "models_profile.json"
    with LoopbackServer(wavering(), models=["m1"]) as server:
        result = invoke(
            "run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none", "-e", "low",
            "--repeats", str(REPEATS),
        )  # fmt: skip
    assert result.exit_code == 0, result.stdout + result.stderr
    assert len(server.bodies) == 2 * REPEATS * 9  # 7 tests, two of them of two steps
    return store


@pytest.fixture
def repeated_copy(repeated: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the repeated run's store and history that a test may change, and a copy of the default suite."""
    shutil.copytree(repeated.parent, tmp_path / "store")
    suite = tmp_path / "suite"
    shutil.copytree(DEFAULT_SUITE, suite)
    return tmp_path / "store" / repeated.name, suite


def entry(profile: dict[str, Any], name: str) -> dict[str, Any]:
    result: dict[str, Any] = next(t for t in profile["testResults"] if t["name"] == name)
    return result


def recorded_scores(level: StoredLevel, name: str) -> list[float]:
    """The recorded score of each run of the test ``name``, in repeat order."""
    return [t.score for t in level.runs_of(name)]


def edit(suite: Path, file: str, change: Callable[[dict[str, Any]], Any]) -> None:
    path = suite / file
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


# --- writing and reading repeats -------------------------------------------------------------------------------------


def test_every_run_of_every_test_is_recorded_with_its_number(repeated: Path) -> None:
    db = history_of(repeated)
    assert rows(db, "PRAGMA user_version")[0][0] == SCHEMA_VERSION >= 2
    assert [r[0] for r in rows(db, "SELECT json_extract(record, '$.repeats') FROM levels ORDER BY id")] == [
        REPEATS,
        REPEATS,
    ]
    for level in rows(db, "SELECT id FROM levels"):
        tests = rows(db, "SELECT position, name, repeat FROM tests WHERE level_id = ? ORDER BY id", level["id"])
        assert [t["position"] for t in tests] == list(range(len(SUITE_ORDER) * REPEATS))
        assert [(t["name"], t["repeat"]) for t in tests] == [
            (name, repeat) for name in SUITE_ORDER for repeat in range(1, REPEATS + 1)
        ]

    run = load_run(db, "last")
    assert json.loads(rows(db, "SELECT options FROM runs")[0]["options"])["repeats"] == REPEATS
    for level in run.levels:
        assert level.repeats == REPEATS
        assert [(t.name, t.repeat) for t in level.tests][:4] == [
            ("frase_8_parole", 1), ("frase_8_parole", 2), ("frase_8_parole", 3), ("lista_vincoli_negativi", 1),
        ]  # fmt: skip
        assert sorted(recorded_scores(level, "frase_8_parole")) == [0.0, 1.0, 1.0]
        assert sorted(recorded_scores(level, "catena_tool_distrattori")) == [0.63, 1.0, 1.0]
        assert recorded_scores(level, "json_prodotti") == [1.0, 1.0, 1.0]
        texts = sorted(t.steps[0].response.text for t in level.runs_of("frase_8_parole") if t.steps[0].response)
        assert texts == [RIGHT_SENTENCE, RIGHT_SENTENCE, WRONG_SENTENCE]
        (group,) = [g for g in level.per_test if g.name == "frase_8_parole"]
        assert (group.score, group.spread) == (0.67, 0.47)
        assert [g.name for g in level.per_test] == SUITE_ORDER


def test_the_profile_and_the_history_hold_the_same_runs(repeated: Path) -> None:
    profiles = stored(repeated)["profiles"]
    run = load_run(history_of(repeated), 1)

    for level in run.levels:
        profile = profiles[level.key]
        assert profile["repeats"] == REPEATS
        assert profile["scores"] == {"instruction": 0.84, "json": 1.0, "toolCalling": 0.95}
        assert profile["tier"] == level.tier == "medium"  # instruction 0.84 is below large's 0.85
        assert level.scores == profile["scores"]
        frase, catena = entry(profile, "frase_8_parole"), entry(profile, "catena_tool_distrattori")
        assert (frase["score"], frase["spread"]) == (0.67, 0.47)
        assert (catena["score"], catena["spread"]) == (0.88, 0.17)
        assert frase["runs"] == recorded_scores(level, "frase_8_parole")
        assert catena["runs"] == recorded_scores(level, "catena_tool_distrattori")
        assert entry(profile, "json_prodotti") == {
            "name": "json_prodotti", "category": "json", "score": 1.0, "spread": 0.0, "runs": [1.0, 1.0, 1.0],
        }  # fmt: skip


def test_runs_names_the_repeats(repeated: Path) -> None:
    table = invoke("runs", "--profiles", repeated)
    listed = json.loads(invoke("runs", "--profiles", repeated, "--json").stdout)

    assert table.exit_code == 0, table.stderr
    assert "run, repeats 3" in table.stdout
    assert [(lv["key"], lv["repeats"]) for lv in listed[0]["levels"]] == [("m1@none", 3), ("m1@low", 3)]


# --- tsuka show ------------------------------------------------------------------------------------------------------


def test_show_gives_each_test_its_mean_spread_and_runs(repeated: Path) -> None:
    level = load_run(history_of(repeated), 1).levels[0]
    runs = " ".join(f"{s:.2f}" for s in recorded_scores(level, "frase_8_parole"))
    wrong = recorded_scores(level, "frase_8_parole").index(0.0) + 1

    overview = invoke("show", "1", "--profiles", repeated)
    detail = invoke("show", "1", "m1@none", "--profiles", repeated)

    assert overview.exit_code == detail.exit_code == 0, overview.stderr + detail.stderr
    sure = stored(repeated)["profiles"]["m1@none"]["tierConfidence"]
    assert f"m1@none  tier medium (confidence {sure:.2f})  recommended  (3 runs per test)" in overview.stdout
    assert f"frase_8_parole               0.67 ± 0.47  runs {runs}\n" in overview.stdout
    assert "json_prodotti                1.00 ± 0.00  runs 1.00 1.00 1.00\n" in overview.stdout
    assert f"x run {wrong}: checks[0] word_count: expected 8 words, got 2" in overview.stdout
    assert "✓" not in overview.stdout  # the overview lists failed checks only
    assert f"✓ run {wrong}: checks[3] not_contains" not in detail.stdout
    for repeat in range(1, REPEATS + 1):
        first_word = "x" if repeat == wrong else "✓"
        assert f"{first_word} run {repeat}: checks[1] first_word" in detail.stdout


def test_show_test_prints_every_run_headed_run_k_of_n(repeated: Path) -> None:
    level = load_run(history_of(repeated), 1).levels[1]
    scores = recorded_scores(level, "frase_8_parole")
    wrong = scores.index(0.0) + 1

    every = invoke("show", "1", "m1@low", "frase_8_parole", "--profiles", repeated)
    one = invoke("show", "1", "m1@low", "frase_8_parole", "--repeat", str(wrong), "--profiles", repeated)

    assert every.exit_code == one.exit_code == 0, every.stderr + one.stderr
    runs = " ".join(f"{s:.2f}" for s in scores)
    assert f"m1@low frase_8_parole (instruction): mean 0.67 ± 0.47 over 3 runs: {runs}" in every.stdout
    headings = [line for line in every.stdout.splitlines() if line.startswith("══ run ")]
    assert headings == [f"══ run {k} of 3: score {s:.2f}" for k, s in enumerate(scores, start=1)]
    assert every.stdout.count(RIGHT_SENTENCE) == 2
    assert every.stdout.count(WRONG_SENTENCE) == 1
    assert every.stdout.count("Write one English sentence of exactly 8 words") == 3
    assert [line for line in one.stdout.splitlines() if line.startswith("══ run ")] == [
        f"══ run {wrong} of 3: score 0.00"
    ]
    assert WRONG_SENTENCE in one.stdout
    assert RIGHT_SENTENCE not in one.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("show", "1", "m1@none", "frase_8_parole", "--repeat", "4"), "there is no run 4"),
        (("show", "1", "m1@none", "--repeat", "1"), "--repeat picks one run of a test"),
        (("show", "1", "--repeat", "0"), "0 is not in the range x>=1"),
    ],
)
def test_show_of_a_run_that_is_not_there_is_refused(repeated: Path, args: tuple[str, ...], message: str) -> None:
    result = invoke(*args, "--profiles", repeated)

    assert result.exit_code == 2
    assert message in result.stderr


def test_a_run_that_failed_once_is_recorded_and_shown_with_its_number(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    with LoopbackServer(every_second_fails("lista_vincoli_negativi"), models=["m1"]) as server:
        result = invoke(
            "run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none", "--repeats", "2",
            "--retries", "0",
        )  # fmt: skip
    assert result.exit_code == 1
    (level,) = load_run(history_of(store), "last").levels
    assert level.stored is False
    runs = level.runs_of("lista_vincoli_negativi")
    assert sorted(t.status for t in runs) == ["error", "ok"]
    failed = next(t for t in runs if t.status == "error")
    assert failed.error is not None
    assert "HTTP 500" in failed.error

    shown = invoke("show", "last", "m1@none", "--profiles", store)

    scores = " ".join("ERR" if t.status == "error" else f"{t.score:.2f}" for t in runs)
    assert f"lista_vincoli_negativi       0.50 ± 0.50  runs {scores}\n" in shown.stdout
    assert f"run {failed.repeat}: ERROR  {failed.error}" in shown.stdout

    rescored = invoke("rescore", "last", "--profiles", store, "--dry-run")
    assert rescored.exit_code == 1
    needing = rescored.stdout.split("Nothing stored:")[1].splitlines()[1:]
    assert needing == [
        f"  m1@none lista_vincoli_negativi (run {failed.repeat} of 2): "
        "step 0: run 1 has no answer for request 0 of this test"
    ]


# --- tsuka rescore ---------------------------------------------------------------------------------------------------


def test_an_unchanged_suite_rescores_a_repeated_run_to_the_same_profiles(repeated_copy: tuple[Path, Path]) -> None:
    store, suite = repeated_copy
    before = stored(store)

    result = invoke("rescore", "1", "--suite", suite, "--profiles", store)

    assert result.exit_code == 0, result.stdout + result.stderr
    assert "m1@none  tier medium (confidence 0.67)  (3 runs per test)" in result.stdout
    after = stored(store)["suiteProfiles"][str(suite.resolve())]  # a copy of the suite: a suite of its own
    assert sorted(after) == sorted(before["profiles"])
    for key, profile in after.items():
        old = before["profiles"][key]
        for name in ("tier", "scores", "testResults", "repeats", "tokensPerSecond", "avgCompletionTokens"):
            assert profile[name] == old[name], (key, name)
        assert profile["rescoredFrom"] == 1
    db = history_of(store)
    assert [r[0] for r in rows(db, "SELECT json_extract(record, '$.repeats') FROM levels WHERE run_id = 2")] == [
        REPEATS,
        REPEATS,
    ]
    first, second = (load_run(db, n) for n in (1, 2))
    for old_level, new_level in zip(first.levels, second.levels, strict=True):
        assert [(t.name, t.repeat, t.score) for t in new_level.tests] == [
            (t.name, t.repeat, t.score) for t in old_level.tests
        ]


def test_each_run_is_rescored_on_its_own_answers(repeated_copy: tuple[Path, Path]) -> None:
    store, suite = repeated_copy
    edit(suite, "10_instruction_frase.json", lambda t: t["checks"][0].update(value=9))  # the right answer: 0.6
    before = stored(store)["profiles"]

    result = invoke("rescore", "last", "--suite", suite, "--profiles", store)

    assert result.exit_code == 0, result.stdout + result.stderr
    after = stored(store)["suiteProfiles"][str(suite.resolve())]
    assert sorted(after) == sorted(before)
    for key, profile in after.items():
        frase = entry(profile, "frase_8_parole")
        assert frase["runs"] == [0.6 if s == 1.0 else 0.0 for s in entry(before[key], "frase_8_parole")["runs"]]
        assert (frase["score"], frase["spread"]) == (0.4, 0.28)
        assert entry(profile, "catena_tool_distrattori") == entry(before[key], "catena_tool_distrattori")
        assert profile["scores"]["instruction"] == 0.7  # (0.4 + 1.0) / 2
        assert profile["repeats"] == REPEATS


def test_a_test_with_a_run_missing_from_the_recording_needs_a_live_run(repeated_copy: tuple[Path, Path]) -> None:
    store, suite = repeated_copy
    db = history_of(store)
    with closing(connect(db)) as conn:
        conn.execute(
            "DELETE FROM tests WHERE name = 'json_annidato' AND repeat = 3"
            " AND level_id = (SELECT id FROM levels WHERE effort = 'low')"
        )
    before = store.read_bytes()

    result = invoke("rescore", "1", "--suite", suite, "--profiles", store)

    assert result.exit_code == 1, result.stdout + result.stderr
    assert store.read_bytes() == before
    needing = result.stdout.split("Nothing stored:")[1].splitlines()
    assert needing == [
        " 1 test(s) need a live run ('tsuka run'):",
        "  m1@low json_annidato (run 3 of 3): step 0: run 1 has no answers for this test"
        " (only 2 of its 3 runs were recorded)",
    ]


# --- layout 1 files --------------------------------------------------------------------------------------------------


def as_layout_1(source: Path, target: Path) -> None:
    """Write ``target`` in layout 1 holding every row of the history ``source`` (its new columns left out)."""
    figures = target.with_name("figures.sqlite")
    shutil.copyfile(source, figures)
    with closing(sqlite3.connect(figures)) as db:
        with_figure_columns(db)
        db.commit()
    source = figures
    with closing(sqlite3.connect(target)) as db:
        db.executescript(V1_SCHEMA)
        db.execute("ATTACH DATABASE ? AS source", (str(source),))
        for table in ("runs", "levels", "tests", "steps", "checks", "responses"):
            columns = ", ".join(row[1] for row in db.execute(f"PRAGMA main.table_info({table})"))
            db.execute(f"INSERT INTO main.{table} ({columns}) SELECT {columns} FROM source.{table}")
        db.execute("PRAGMA user_version = 1")
        db.commit()
        db.execute("DETACH DATABASE source")


@pytest.fixture
def layout_1(tmp_path: Path) -> tuple[Path, StoredRun]:
    """A layout 1 history holding one real run of m1 at none (run 1), and that run as read from the original."""
    store = tmp_path / "models_profile.json"
    with LoopbackServer(perfect, models=["m1"]) as server:
        assert invoke("run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none").exit_code == 0
    old = tmp_path / "old.sqlite"
    as_layout_1(history_of(store), old)
    assert rows(old, "PRAGMA user_version")[0][0] == 1
    assert "repeat" not in [r[1] for r in rows(old, "PRAGMA table_info(tests)")]
    return old, kept(load_run(history_of(store), 1))


def kept(run: StoredRun) -> StoredRun:
    """``run`` as a file of layout 1 keeps it: without the levels' written records (read from columns there)."""
    return replace(run, levels=tuple(replace(level, record=LevelRecord()) for level in run.levels))


def test_a_layout_1_history_is_read_as_it_is(layout_1: tuple[Path, StoredRun]) -> None:
    old, original = layout_1
    before = old.read_bytes()

    run = load_run(old, 1)
    shown = invoke("show", "1", "m1@none", "--history-db", old)
    transcript = invoke("show", "1", "m1@none", "frase_8_parole", "--history-db", old)
    listed = invoke("runs", "--history-db", old, "--json")

    assert kept(run) == original
    fields = ("model", "tier", "scores", "tokensPerSecond", "reasoningEffort", "backend", "sampling")
    written = load_run(history_of(old.parent / "models_profile.json"), 1).levels[0].record
    assert {f: run.levels[0].record.found(f) for f in fields} == {f: written.found(f) for f in fields}
    assert run.levels[0].repeats == 1
    assert {t.repeat for t in run.levels[0].tests} == {1}
    assert [lv.repeats for _, levels in list_runs(old) for lv in levels] == [1]
    assert shown.exit_code == transcript.exit_code == listed.exit_code == 0, shown.stderr + transcript.stderr
    assert "frase_8_parole               1.00\n" in shown.stdout
    assert "runs per test" not in shown.stdout
    assert "95% intervals: " not in shown.stdout  # an older history's level kept no intervals: none made up
    assert "m1@none frase_8_parole (instruction): score 1.00" in transcript.stdout
    assert "══ run" not in transcript.stdout
    assert old.read_bytes() == before, "reading upgraded the file"


def test_a_layout_1_history_is_upgraded_in_place_keeping_every_row(layout_1: tuple[Path, StoredRun]) -> None:
    old, original = layout_1
    counts = {t: rows(old, f"SELECT count(*) FROM {t}")[0][0] for t in ("runs", "levels", "tests", "steps", "checks")}

    with closing(connect(old)):
        pass

    assert rows(old, "PRAGMA user_version")[0][0] == SCHEMA_VERSION
    assert {t: rows(old, f"SELECT count(*) FROM {t}")[0][0] for t in counts} == counts
    assert {r["repeat"] for r in rows(old, "SELECT repeat FROM tests")} == {1}
    assert [r[0] for r in rows(old, "SELECT json_extract(record, '$.repeats') FROM levels")] == [None]
    assert "repeats" not in [r[1] for r in rows(old, "PRAGMA table_info(levels)")]
    assert kept(load_run(old, 1)) == original
    with LoopbackServer(wavering(), models=["m1"]) as server:
        result = invoke(
            "run", "m1", "--base-url", server.base_url, "--profiles", old.parent / "other.json", "-e", "none",
            "--repeats", "2", "--history-db", old,
        )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert kept(load_run(old, 1)) == original
    (level,) = load_run(old, 2).levels
    assert level.repeats == 2
    assert sorted(recorded_scores(level, "frase_8_parole")) == [0.0, 1.0]


def test_a_run_records_into_a_layout_1_history_after_upgrading_it(layout_1: tuple[Path, StoredRun]) -> None:
    old, original = layout_1
    with LoopbackServer(perfect, models=["m1"]) as server:
        result = invoke(
            "run", "m1", "--base-url", server.base_url, "--profiles", old.parent / "other.json", "-e", "low",
            "--repeats", "2", "--history-db", old,
        )  # fmt: skip

    assert result.exit_code == 0, result.stderr
    assert rows(old, "PRAGMA user_version")[0][0] == SCHEMA_VERSION
    assert kept(load_run(old, 1)) == original
    assert [(lv.key, lv.repeats, len(lv.tests)) for lv in load_run(old, 2).levels] == [("m1@low", 2, 14)]


def test_a_failed_upgrade_changes_nothing(layout_1: tuple[Path, StoredRun], monkeypatch: pytest.MonkeyPatch) -> None:
    old, original = layout_1
    first, _ = history._UPGRADES[1]
    broken = {**history._UPGRADES, 1: (first, "ALTER TABLE no_such_table ADD COLUMN x INTEGER")}
    monkeypatch.setattr(history, "_UPGRADES", broken)
    before = old.read_bytes()

    with pytest.raises(StoreError, match="not a usable tsuka history"):
        connect(old)

    assert old.read_bytes() == before
    assert rows(old, "PRAGMA user_version")[0][0] == 1
    assert "repeats" not in [r[1] for r in rows(old, "PRAGMA table_info(levels)")]
    monkeypatch.undo()
    assert kept(load_run(old, 1)) == original


def test_a_newer_layout_is_still_refused_read_only_or_not(tmp_path: Path) -> None:
    newer = tmp_path / "newer.sqlite"
    with closing(sqlite3.connect(newer)) as db:
        db.executescript(V1_SCHEMA)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    before = newer.read_bytes()

    for create in (True, False):
        with pytest.raises(StoreError, match="newer tsuka"):
            connect(newer, create=create)
    assert newer.read_bytes() == before
