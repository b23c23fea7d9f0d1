"""Absurd figures from a server or a store: written as not reported, read without a crash, never a refused history."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from answerers import perfect
from gate_helpers import profile
from history_helpers import invoke
from loopback import LoopbackServer, Reply

pytestmark = pytest.mark.usefixtures("fast_retries")


def timed(timings: dict[str, Any]) -> Any:
    """The perfect answers, each with llama.cpp ``timings`` as given."""

    def answer(body: dict[str, Any], n: int) -> Reply:
        data = json.loads(perfect(body, n).render("m1", n))
        return Reply.body(json.dumps({**data, "timings": timings}).encode())

    return answer


@pytest.mark.parametrize(
    "timings",
    [
        {"predicted_ms": 1e-6, "predicted_n": 10_000_000, "prompt_ms": 1e-6, "prompt_n": 10_000_000},
        {"predicted_ms": 1e-300, "predicted_n": 5, "prompt_ms": 1e-300, "prompt_n": 20},
        {"predicted_ms": 0, "predicted_n": 5},
    ],
    ids=["a-rate-of-1e16", "1e-300-ms", "tokens-in-no-time"],
)
def test_server_timings_that_cannot_be_true_are_not_reported_and_said(tmp_path: Path, timings: dict[str, Any]) -> None:
    store = tmp_path / "models_profile.json"
    with LoopbackServer(timed(timings), models=("m1",)) as server:
        ran = invoke(
            "run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none", "--option", "stream=off"
        )
    said = ran.stdout + ran.stderr
    assert ran.exit_code == 0, said
    assert "Traceback" not in said
    assert "the server's timings could not be true" in said
    stored = json.loads(store.read_text(encoding="utf-8"))["profiles"]["m1@none"]
    assert stored["speedSource"] == "wall"
    assert 0 < stored["tokensPerSecond"] < 1e7
    for args in (("runs",), ("show", "last"), ("report", "-o", tmp_path / "r.html"), ("compare", "1", "1")):
        shown = invoke(*args, "--profiles", store)
        assert shown.exit_code == 0, shown.stdout + shown.stderr  # the history reads: nothing written is "damage"


def test_absurd_stored_numbers_show_as_unknown_and_crash_no_command(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    absurd = profile("m", "none", "large") | {
        "scores": {"instruction": 1e308, "json": 0.5, "toolCalling": -3},
        "tokensPerSecond": 1e308,
        "avgCompletionTokens": 1e308,
        "testResults": [{"name": "a", "category": "json", "score": 1e308}],
    }
    data = {"profiles": {"m@none": absurd, "m@low": absurd | {"reasoningEffort": "low"}}, "recommendations": {}}
    store.write_text(json.dumps(data), encoding="utf-8")
    for args in (("profiles",), ("compare", "m@none", "m@low"), ("compare", "m@none", "m@low", "--json")):
        shown = invoke(*args, "--profiles", store)
        said = shown.stdout + shown.stderr
        assert "Traceback" not in said
        assert shown.exit_code in (0, 2), said
    listed = invoke("profiles", "--profiles", store)
    assert "50%" in listed.stdout
    assert "?" in listed.stdout


def test_a_history_level_whose_backend_facts_clash_is_rescored_with_them_kept_apart(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    with LoopbackServer(perfect, models=("m1",)) as server:
        assert invoke("run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none").exit_code == 0
    history = tmp_path / ".tsuka" / "history.sqlite"
    clashing = {"tier": "small", "model": "other", "testsHash": "00000000"}
    with closing(sqlite3.connect(history)) as db:
        db.execute("UPDATE levels SET record = json_set(record, '$.backendExtra', json(?))", (json.dumps(clashing),))
        db.commit()
    for args in (("rescore", "last"), ("show", "last"), ("report", "-o", tmp_path / "r.html")):
        done = invoke(*args, "--profiles", store)
        assert done.exit_code == 0, done.stdout + done.stderr
    stored = json.loads(store.read_text(encoding="utf-8"))["profiles"]["m1@none"]
    assert (stored["tier"], stored["model"]) == ("large", "m1")  # the record's own fields stand
    assert stored["backendExtra"] == clashing
