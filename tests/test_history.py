"""The run history: what `tsuka run` records, `tsuka runs` and `tsuka show`, and the file's safety."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from answerers import by_model, perfect, tool_shy
from history_helpers import history_of, invoke, rows
from loopback import LoopbackServer, Reply

from tsuka_core.engine.record import level_record
from tsuka_core.errors import StoreError
from tsuka_core.storage.history import (
    SCHEMA_VERSION,
    connect,
    response_from_json,
    response_to_json,
)
from tsuka_core.storage.history_query import list_runs, load_run
from tsuka_core.storage.recorder import RunInfo, RunRecorder

pytestmark = pytest.mark.usefixtures("fast_retries")

SECRET_KEY = "sk-test-do-not-store-4711"
SECRET_PASSWORD = "pw-do-not-store-0815"


def thinking(body: dict[str, Any], n: int) -> Reply:
    """Right answers, each text answer with separate reasoning and a <think> block in the content."""
    reply = perfect(body, n)
    if reply.content is None:
        return reply
    return Reply.text(f"<think>inner {n}</think>{reply.content}", reasoning=f"reasoning of request {n}")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], int]:
    """A run of alpha (right, with reasoning) and beta (no tools) at none and low, with its JSON output."""
    folder = tmp_path_factory.mktemp("recorded")
    store, out = folder / "models_profile.json", folder / "run.json"
    answers = by_model({"alpha": thinking, "beta": tool_shy})
    with LoopbackServer(answers, models=["alpha", "beta"]) as server:
        result = invoke(
            "run", "all", "--base-url", server.base_url, "--profiles", store, "-e", "none", "-e", "low",
            "--json-file", out,
        )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "Recorded as run 1 in" in result.stdout
    return store, json.loads(out.read_text(encoding="utf-8")), len(server.bodies)


def test_the_run_names_the_history_file_it_wrote_wherever_the_store_is(tmp_path: Path) -> None:
    """The store in another folder than the working one: the line names the history beside it, not one here."""
    store = tmp_path / "elsewhere" / "models_profile.json"
    with LoopbackServer(perfect) as server:
        result = invoke("run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none")
    assert result.exit_code == 0, result.stderr
    assert f"Recorded as run 1 in {history_of(store)} ('tsuka show 1', 'tsuka report')" in result.stdout


def test_a_run_is_recorded_beside_the_store_with_its_settings(recorded: tuple[Path, dict[str, Any], int]) -> None:
    store, output, _ = recorded
    db = history_of(store)
    (run,) = rows(db, "SELECT * FROM runs")
    assert rows(db, "PRAGMA user_version")[0][0] == SCHEMA_VERSION
    assert run["status"] == "ok"
    assert run["suite_hash"] == output["testsHash"]
    assert run["backend"] == "openai"
    assert run["provider"] == output["provider"]
    assert json.loads(run["models"]) == ["alpha", "beta"]
    assert json.loads(run["efforts"]) == ["none", "low"]
    assert json.loads(run["options"])["concurrency"] == 4
    assert run["finished_at"] >= run["started_at"]


def test_every_request_answer_and_check_is_recorded(recorded: tuple[Path, dict[str, Any], int]) -> None:
    store, output, requests = recorded
    run = load_run(history_of(store), "last")

    assert [lv.key for lv in run.levels] == ["alpha@none", "alpha@low", "beta@none", "beta@low"]
    answered = [s for lv in run.levels for t in lv.tests for s in t.steps if s.response is not None]
    assert len(answered) == requests
    for level, shown in zip(run.levels, output["levels"], strict=True):
        assert [t.score for t in level.tests] == [t["score"] for t in shown["tests"]]
        recorded_checks = [(c.location, c.status, c.detail) for t in level.tests for s in t.steps for c in s.checks]
        printed = [(c["location"], c["status"], c["detail"]) for t in shown["tests"] for c in t["checks"]]
        assert recorded_checks == printed
        assert level.tier == shown["tier"]
        assert level.stored is True
    assert [lv.recommended for lv in run.levels] == [True, False, True, False]


def test_reasoning_is_kept_apart_from_the_answer(recorded: tuple[Path, dict[str, Any], int]) -> None:
    store, _, _ = recorded
    level = load_run(history_of(store), 1).levels[0]
    step = next(t for t in level.tests if t.name == "frase_8_parole").steps[0]

    assert step.response is not None
    assert step.response.reasoning is not None
    assert step.response.reasoning.startswith("reasoning of request ")
    assert step.response.text == "Every morning the fisherman walks beside the river."
    assert step.response.content is not None
    assert step.response.content.startswith("<think>inner ")
    assert step.messages[-1]["role"] == "user"
    assert step.response.completion_tokens == 7
    assert step.response.duration > 0


def test_tool_calls_survive_the_round_trip(recorded: tuple[Path, dict[str, Any], int]) -> None:
    store, _, _ = recorded
    level = load_run(history_of(store), 1).levels[0]
    test = next(t for t in level.tests if t.name == "catena_tool_distrattori")

    first, second = test.steps
    assert first.response is not None
    assert [(c.name, c.arguments) for c in first.response.tool_calls] == [("find_customer", {"name": "Daniel Hughes"})]
    assert second.messages[-1]["role"] == "tool"
    assert second.messages[-2]["tool_calls"][0]["function"]["name"] == "find_customer"
    assert {t["function"]["name"] for t in test.tools} >= {"find_customer", "get_invoices"}
    assert response_from_json(response_to_json(first.response)) == first.response


def test_runs_lists_every_run_newest_first(recorded: tuple[Path, dict[str, Any], int]) -> None:
    store, _, _ = recorded
    result = invoke("runs", "--profiles", store)

    assert result.exit_code == 0, result.stderr
    assert "alpha@none large*" in result.stdout
    assert "beta@none small*" in result.stdout
    as_json = json.loads(invoke("runs", "--profiles", store, "--json").stdout)
    assert [r["id"] for r in as_json] == [1]
    assert as_json[0]["levels"][0] == {
        "key": "alpha@none",
        "name": "alpha",
        "endpoint": None,
        "tier": "large",
        "recommended": True,
        "repeats": 1,
    }
    assert "repeats" not in result.stdout  # a single run says nothing of repeats


def test_show_prints_levels_then_checks_then_a_transcript(recorded: tuple[Path, dict[str, Any], int]) -> None:
    store, _, _ = recorded

    overview = invoke("show", "1", "--profiles", store)
    level = invoke("show", "last", "beta@none", "--profiles", store)
    transcript = invoke("show", "1", "alpha@low", "frase_8_parole", "--profiles", store)

    assert overview.exit_code == level.exit_code == transcript.exit_code == 0
    assert "alpha@low  tier large" in overview.stdout
    assert (
        "x steps[0].checks[0] tool_called: abstained: answered without calling find_customer; no tool call"
        in overview.stdout
    )
    assert "✓ checks[0] word_count: expected 8 words, got 8" in level.stdout
    assert "x steps[0].checks[0] tool_called" in level.stdout
    text = transcript.stdout
    assert "Write one English sentence of exactly 8 words" in text
    assert "reasoning:" in text
    assert "reasoning of request" in text
    assert "Every morning the fisherman walks beside the river." in text
    assert "✓ checks[1] first_word: first word 'Every', expected 'Every'" in text
    assert "7 completion tokens in" in text


def test_show_request_prints_each_step_as_sent_messages_and_tools(recorded: tuple[Path, dict[str, Any], int]) -> None:
    """--request: the exact request of each step (as the history recorded it) as JSON, tools offered included."""
    store, _, _ = recorded
    shown = invoke("show", "1", "alpha@none", "catena_tool_distrattori", "--request", "--profiles", store)
    assert shown.exit_code == 0, shown.stderr
    assert "tools offered: " in shown.stdout
    test = next(t for t in load_run(history_of(store), 1).levels[0].tests if t.name == "catena_tool_distrattori")
    bodies = shown.stdout.split("── request of step ")[1:]
    assert len(bodies) == len([s for s in test.steps if s.sent])
    first = json.loads(bodies[0].split("\n", 1)[1].split("\n\n", 1)[0])
    assert first == {"messages": list(test.steps[0].messages), "tools": list(test.tools)}
    long = invoke("show", "1", "alpha@none", "frase_8_parole", "--request", "--profiles", store).stdout
    body = long.split("── request of step 0\n", 1)[1].split("\n\n", 1)[0]
    assert max(map(len, body.splitlines())) > 160  # a line longer than the plain width is kept whole
    assert json.loads(body)["messages"][-1]["role"] == "user"
    refused = invoke("show", "1", "--request", "--profiles", store)
    assert refused.exit_code == 2
    assert "--request shows one test's requests: give MODEL@EFFORT and TEST too" in refused.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("show", "9"), "no run '9'"),
        (("show", "1", "gamma@none"), "has no level 'gamma@none'"),
        (("show", "1", "alpha@none", "nope"), "has no test 'nope'"),
    ],
)
def test_show_of_something_missing_is_one_line(
    recorded: tuple[Path, dict[str, Any], int], args: tuple[str, ...], message: str
) -> None:
    store, _, _ = recorded
    result = invoke(*args, "--profiles", store)

    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_no_api_key_or_password_reaches_the_history(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    with LoopbackServer(perfect, models=["m1"]) as server:
        url = server.base_url.replace("http://", f"http://user:{SECRET_PASSWORD}@")
        refused = invoke(  # the openai backend reads no such option: refused, the value never shown
            "run", "m1", "--base-url", url, "--profiles", store, "-e", "none", "--option", f"api_key={SECRET_KEY}",
        )  # fmt: skip
        result = invoke(
            "run", "m1", "--base-url", url, "--profiles", store, "-e", "none", "--cache",
            env={"OPENAI_API_KEY": SECRET_KEY},
        )  # fmt: skip
    assert refused.exit_code == 2
    assert "has no option 'api_key'" in refused.stderr
    assert SECRET_KEY not in refused.stderr + refused.stdout
    assert result.exit_code == 0, result.stderr
    assert server.requests[-1].headers["authorization"]  # the credentials were sent, so they were at hand
    data = history_of(store).read_bytes()
    assert SECRET_KEY.encode() not in data
    assert SECRET_PASSWORD.encode() not in data
    assert b"user:" not in data
    (run,) = rows(history_of(store), "SELECT provider, options FROM runs")
    assert run["provider"] == server.base_url
    assert json.loads(run["options"])["backendOptions"] == {}


def test_no_history_records_nothing_and_history_db_moves_it(tmp_path: Path) -> None:
    store, elsewhere = tmp_path / "models_profile.json", tmp_path / "other" / "runs.sqlite"
    with LoopbackServer(perfect, models=["m1"]) as server:
        off = invoke("run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none", "--no-history")
        moved = invoke(
            "run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none", "--history-db", elsewhere
        )
        by_env = invoke(
            "run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none",
            env={"TSUKA_HISTORY": str(elsewhere)},
        )  # fmt: skip

    assert off.exit_code == moved.exit_code == by_env.exit_code == 0
    assert "Recorded" not in off.stdout
    assert not history_of(store).exists()
    assert [r["id"] for r in rows(elsewhere, "SELECT id FROM runs")] == [1, 2]
    assert invoke("runs", "--history-db", elsewhere).exit_code == 0


def test_a_failed_level_is_recorded_with_its_cause(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"

    def flaky(body: dict[str, Any], n: int) -> Reply:
        if "8 words" in str(body["messages"][-1].get("content")):
            return Reply.error(500, "the model crashed")
        return perfect(body, n)

    with LoopbackServer(flaky, models=["m1"]) as server:
        result = invoke("run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none", "--retries", "0")

    assert result.exit_code == 1
    (level,) = load_run(history_of(store), "last").levels
    assert level.stored is False
    assert level.complete is False
    (failed,) = [t for t in level.tests if t.status == "error"]
    assert failed.name == "frase_8_parole"
    assert failed.error is not None
    assert "HTTP 500" in failed.error
    assert rows(history_of(store), "SELECT status FROM runs")[0]["status"] == "failed"


def test_a_model_is_written_in_one_transaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure half-way through a model's levels leaves none of them: a crash loses at most that model."""
    from tsuka_core.storage import recorder as recorder_module

    store = tmp_path / "models_profile.json"
    with LoopbackServer(perfect, models=["m1"]) as server:
        invoke("run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none", "-e", "low")
    db = history_of(store)
    levels = load_run(db, 1).levels
    recorder = RunRecorder(db, RunInfo("suite", "hash", "openai", "url", ["m1"], ["none", "low"], {}))
    written: list[int] = []
    real = recorder_module._write_level

    def failing_second(*args: Any) -> None:
        if written:
            raise sqlite3.OperationalError("disk I/O error")
        written.append(1)
        real(*args)

    monkeypatch.setattr(recorder_module, "_write_level", failing_second)
    results = _as_results(levels)
    with pytest.raises(StoreError, match="disk I/O error"):  # one line for the user, the transaction rolled back
        recorder.record_levels(results, [level_record(level) for level in results])

    assert rows(db, "SELECT count(*) FROM levels WHERE run_id = ?", recorder.run_id)[0][0] == 0
    assert rows(db, "SELECT count(*) FROM levels WHERE run_id = 1")[0][0] == 2


def _as_results(levels: Any) -> list[Any]:
    """Levels without tests, carrying what the writer reads of the recorded ones."""
    from tsuka_core.engine.results import LevelResult

    return [
        LevelResult(
            model=lv.model, effort=lv.effort, effort_applied=True, tests=(), scores={}, tier=lv.tier,
            tokens_per_second=0.0, avg_completion_tokens=0, backend="openai", provider="url",
        )
        for lv in levels
    ]  # fmt: skip


def test_a_newer_or_foreign_database_is_refused_untouched(tmp_path: Path) -> None:
    newer, foreign = tmp_path / "newer.sqlite", tmp_path / "foreign.sqlite"
    with closing(sqlite3.connect(newer)) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with closing(sqlite3.connect(foreign)) as db, db:
        db.execute("CREATE TABLE notes (x)")
    before = newer.read_bytes(), foreign.read_bytes()

    with pytest.raises(StoreError, match="newer tsuka"):
        connect(newer)
    with pytest.raises(StoreError, match="not a tsuka history"):
        connect(foreign)
    with pytest.raises(StoreError, match="no run history"):
        list_runs(tmp_path / "missing.sqlite")
    assert (newer.read_bytes(), foreign.read_bytes()) == before
    not_sqlite = tmp_path / "garbage.sqlite"
    not_sqlite.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="not a usable tsuka history"):
        connect(not_sqlite)


def test_two_runs_share_one_history(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    with LoopbackServer(by_model({"a": perfect, "b": tool_shy}), models=["a", "b"]) as server:
        for model in ("a", "b"):
            invoke("run", model, "--base-url", server.base_url, "--profiles", store, "-e", "none")

    found = list_runs(history_of(store))
    assert [(run.id, [lv.key for lv in levels]) for run, levels in found] == [(2, ["b@none"]), (1, ["a@none"])]
    assert Counter(r["kind"] for r in rows(history_of(store), "SELECT kind FROM runs")) == {"run": 2}
