"""Numbers no run could have written, read back from the history: one "damaged" line in every command, never a crash."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from answerers import perfect
from click.testing import Result
from history_helpers import invoke
from loopback import LoopbackServer, Reply

pytestmark = pytest.mark.usefixtures("fast_retries")


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A history holding two runs of m1 at effort none."""
    folder = tmp_path_factory.mktemp("absurd")
    with LoopbackServer(perfect) as server:
        for _ in range(2):
            result = invoke("run", "m1", "--base-url", server.base_url, "--profiles", folder / "p.json", "-e", "none",
                            "--history-db", folder / "history.sqlite")  # fmt: skip
            assert result.exit_code == 0, result.stderr
    return folder / "history.sqlite"


def one_line(result: Result, status: int, *needles: str) -> None:
    assert result.exit_code == status, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("tsuka: error:")]
    assert len(lines) == 1, result.stderr
    assert all(needle in lines[0] for needle in needles), lines[0]


ABSURD = {
    "score 1e308": "UPDATE tests SET score = 1e308",
    "score NaN": "UPDATE tests SET score = 'NaN'",
    "score above 1": "UPDATE tests SET score = 1.5",
    "tokens/s 1e308": "UPDATE levels SET record = json_set(record, '$.tokensPerSecond', 1e308)",
    "tokens/s text": "UPDATE levels SET record = json_set(record, '$.tokensPerSecond', 'NaN')",
    "category score 1e308": "UPDATE levels SET record = json_set(record, '$.scores.instruction', 1e308)",
    "category score NaN": "UPDATE levels SET record = replace(record, '\"instruction\":1', '\"instruction\":NaN')",
    "average tokens 1e308": "UPDATE levels SET record = json_set(record, '$.avgCompletionTokens', 1e308)",
    "record not an object": "UPDATE levels SET record = '[1, 2]'",
    "record not JSON": "UPDATE levels SET record = '{'",
    "status unknown": "UPDATE levels SET status = 'splendid'",
    "test weight 1e308": "UPDATE tests SET weight = 1e308",
    "check weight NaN": "UPDATE checks SET weight = 'NaN'",
    "repeats 1e18": "UPDATE levels SET record = json_set(record, '$.repeats', 1000000000000000000)",
    "repeats 0": "UPDATE levels SET record = json_set(record, '$.repeats', 0)",
    "request time 1e308": "UPDATE steps SET response = json_set(response, '$.duration', 1e308)",
    "first token time negative": "UPDATE steps SET response = json_set(response, '$.firstTokenMs', -1e308)",
}


@pytest.mark.parametrize("tampering", list(ABSURD.values()), ids=list(ABSURD))
def test_an_absurd_stored_number_is_one_damaged_line_everywhere(tmp_path: Path, two_runs: Path, tampering: str) -> None:
    copy = tmp_path / "history.sqlite"
    shutil.copyfile(two_runs, copy)
    with closing(sqlite3.connect(copy)) as db:
        db.execute(tampering)
        db.commit()
    for args in (
        ("show", "1"),
        ("report", "-o", tmp_path / "report.html"),
        ("compare", "1", "last"),
        ("report", "--compare", "1", "last", "-o", tmp_path / "compare.html"),
        ("rescore", "1", "--profiles", tmp_path / "p.json"),
    ):
        one_line(invoke(*args, "--history-db", copy), 2, str(copy), "is damaged")


@pytest.mark.parametrize("ref", ["9223372036854775808", "9223372036854775807", "1" * 40, "\u00b2", "\u0661"])
def test_a_run_number_past_what_sqlite_holds_names_no_run(two_runs: Path, ref: str) -> None:
    for command in ("show", "rescore"):
        one_line(invoke(command, ref, "--history-db", two_runs), 2, "no run", "'tsuka runs' lists them")
    one_line(invoke("compare", ref, "1", "--history-db", two_runs), 2)


HUGE = 10**400
COUNTS = ("promptTokens", "completionTokens", "generatedTokens", "promptProcessed", "reasoningTokens")


@pytest.mark.parametrize("field", COUNTS)
def test_a_stored_count_past_any_float_is_never_a_traceback(tmp_path: Path, two_runs: Path, field: str) -> None:
    copy = tmp_path / "history.sqlite"
    shutil.copyfile(two_runs, copy)
    with closing(sqlite3.connect(copy)) as db:
        for step_id, text in db.execute("SELECT id, response FROM steps WHERE response IS NOT NULL").fetchall():
            answer = json.loads(text)
            answer.update({field: HUGE, "generationMs": 5e-324, "promptMs": 5e-324})
            db.execute("UPDATE steps SET response = ? WHERE id = ?", (json.dumps(answer), step_id))
        db.commit()
    for args in (
        ("show", "1"),
        ("report", "-o", tmp_path / "report.html"),
        ("compare", "1", "last"),
        ("rescore", "1", "--profiles", tmp_path / "p.json"),
    ):
        result = invoke(*args, "--history-db", copy)
        assert "Traceback" not in result.stderr
        assert result.exit_code in (0, 2), result.stderr
        if result.exit_code == 2:
            one_line(result, 2, "is damaged")


def _timed(body: dict[str, object], n: int) -> Reply:
    """Every answer right, with llama.cpp timings that claim the tokens took no time at all."""
    answer = perfect(body, n)
    message: dict[str, object] = {"role": "assistant", "content": answer.content}
    if answer.tool_calls:
        name, arguments = answer.tool_calls[0]
        call = {"id": f"c{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        message["tool_calls"] = [call]
    timings = {"predicted_ms": 5e-324, "predicted_n": 7, "prompt_ms": 5e-324, "prompt_n": 12}
    data = {
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if answer.tool_calls else "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": HUGE},
        "timings": timings,
    }
    return Reply(raw=json.dumps(data).encode())


def test_timings_of_no_time_and_counts_past_any_float_lose_no_level(tmp_path: Path) -> None:
    store = tmp_path / "p.json"
    with LoopbackServer(_timed) as server:
        result = invoke("run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none",
                        "--history-db", tmp_path / "h.sqlite")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    profile = json.loads(store.read_text(encoding="utf-8"))["profiles"]["m1@none"]
    assert profile["tier"] == "large"
    assert "decodeTokensPerSecond" not in profile.get("speedFigures", {})


@pytest.mark.parametrize("table", ["responses", "checks"])
def test_a_history_without_one_of_its_tables_is_refused_as_damaged_naming_it(
    tmp_path: Path, two_runs: Path, table: str
) -> None:
    copy = tmp_path / "history.sqlite"
    shutil.copyfile(two_runs, copy)
    with closing(sqlite3.connect(copy)) as db:
        db.execute("PRAGMA foreign_keys = OFF")
        db.execute(f"DROP TABLE {table}")
        db.commit()
    with LoopbackServer(perfect) as server:
        run = invoke("run", "m1", "--base-url", server.base_url, "--profiles", tmp_path / "p.json", "-e", "none",
                     "--history-db", copy)  # fmt: skip
        asked = len(server.bodies)
    one_line(run, 2, str(copy), f"has no {table} table")
    assert asked == 0  # refused before any request, never a backend error per request
    one_line(invoke("show", "1", "--history-db", copy), 2, f"has no {table} table")
