"""Bounds on what one answer may cost: a JMESPath search's time, the history's room, the length of a detail."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from answerers import PERFECT_TEXT, perfect, which_test
from history_helpers import invoke, rows
from loopback import LoopbackServer, Reply

from tsuka_core import Answer, Registry, load_registry
from tsuka_core.judge.checks import run_check
from tsuka_core.judge.jsontools import PATH_TIMEOUT
from tsuka_core.storage.answer_json import MAX_ANSWER_BYTES

pytestmark = pytest.mark.usefixtures("fast_retries")


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry()


def evaluate(registry: Registry, text: str, type_name: str, **params: Any) -> tuple[str, str]:
    check_type = registry.check_type(type_name)
    assert check_type is not None
    outcome = run_check(check_type(check_type.params_model.model_validate(params)), Answer(text))
    return outcome.status, outcome.detail


def test_a_costly_jmespath_search_is_errored_within_its_limit(registry: Registry) -> None:
    cube = json.dumps([[list(range(60)) for _ in range(60)] for _ in range(60)])
    path = "[*][*][*].to_string(@) | sort(@) | [*].length(@)"
    started = time.monotonic()
    status, detail = evaluate(registry, cube, "json_path_equals", path=path, value=1)
    took = time.monotonic() - started
    assert (status, detail) == ("errored", f"JMESPath search exceeded {PATH_TIMEOUT:g} s")
    assert took < PATH_TIMEOUT + 2.0, took


@pytest.mark.parametrize("type_name", ["first_word", "last_word"])
def test_a_word_detail_quotes_a_readable_length(registry: Registry, type_name: str) -> None:
    status, detail = evaluate(registry, "x" * 100_000, type_name, value="Every")
    assert status == "failed"
    assert len(detail) < 120, detail
    assert detail.endswith("expected 'Every'")


def huge_first_answer(body: dict[str, Any], n: int) -> Reply:
    """The first sentence test gets a 3 MB answer; the rest are perfect."""
    if which_test(body)[0] == "frase_8_parole":
        return Reply.text(PERFECT_TEXT["frase_8_parole"] + " " + "é" * 3 * 1024 * 1024, reasoning="r" * 2_000_000)
    return perfect(body, n)


def test_the_history_keeps_at_most_one_mb_of_an_answer_marked_as_cut(tmp_path: Path) -> None:
    store, history = tmp_path / "models_profile.json", tmp_path / "history.sqlite"
    with LoopbackServer(huge_first_answer) as server:
        run = invoke("run", "m1", "--base-url", server.base_url, "--profiles", store, "--history-db", history,
                     "-e", "none", "--cache")  # fmt: skip
    assert run.exit_code == 0, run.stderr
    (step,) = rows(history, "SELECT s.response FROM steps s JOIN tests t ON s.test_id = t.id WHERE t.name = ?",
                   "frase_8_parole")  # fmt: skip
    assert len(step["response"].encode("utf-8")) <= MAX_ANSWER_BYTES
    answer = json.loads(step["response"])
    assert answer["cut"] > 3 * 1024 * 1024
    assert answer["text"].startswith(PERFECT_TEXT["frase_8_parole"])
    assert rows(history, "SELECT count(*) FROM responses WHERE length(response) > ?", MAX_ANSWER_BYTES)[0][0] == 0
    assert invoke("show", "last", "m1@none", "frase_8_parole", "--history-db", history).exit_code == 0
    rescored = invoke("rescore", "last", "--history-db", history, "--profiles", store)
    assert rescored.exit_code == 1
    assert "too large to keep whole" in rescored.stdout
