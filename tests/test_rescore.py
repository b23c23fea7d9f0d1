"""tsuka rescore: the current checks judged against recorded answers, with zero requests to any model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from answerers import by_model, fooled, perfect
from history_helpers import DEFAULT_SUITE, history_of, invoke, rows, stored
from loopback import LoopbackServer

from tsuka_core.storage.store import profile_status
from tsuka_core.suite.loading import suite_hash

LEVELS = ["none", "low"]


@pytest.fixture
def measured(tmp_path: Path) -> tuple[Path, Path, LoopbackServer]:
    """alpha (right) and beta (fooled by the distractor) measured at none and low; the server stays up."""
    suite = tmp_path / "suite"
    shutil.copytree(DEFAULT_SUITE, suite)
    store = tmp_path / "models_profile.json"
    with LoopbackServer(by_model({"alpha": perfect, "beta": fooled}), models=["alpha", "beta"]) as server:
        result = invoke(
            "run", "all", "--base-url", server.base_url, "--profiles", store, "--suite", suite, "-e", "none",
            "-e", "low",
        )  # fmt: skip
        assert result.exit_code == 0, result.stderr
        yield suite, store, server


def edit(suite: Path, name: str, change: Any) -> None:
    path = suite / name
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def add_test(suite: Path, file: str, name: str) -> None:
    shutil.copy(suite / "20_json_prodotti.json", suite / file)
    edit(suite, file, lambda t: t.update(name=name))


def test_changed_checks_are_rescored_with_zero_requests(measured: tuple[Path, Path, LoopbackServer]) -> None:
    suite, store, server = measured
    old_hash = suite_hash(suite)
    edit(suite, "10_instruction_frase.json", lambda t: t["checks"][0].update(value=9))  # demands 9 words now
    edit(suite, "30_tool_catena.json", lambda t: t["steps"][1]["checks"][1].update(value="CUS-3318"))
    requests = len(server.requests)

    result = invoke("rescore", "last", "--suite", suite, "--profiles", store)

    assert result.exit_code == 0, result.stdout + result.stderr
    assert len(server.requests) == requests, "rescore asked the model"
    new_hash = suite_hash(suite)
    assert new_hash != old_hash
    data = stored(store)["suiteProfiles"][str(suite.resolve())]
    assert sorted(data) == sorted(f"{m}@{e}" for m in ("alpha", "beta") for e in LEVELS)
    for key, profile in data.items():
        assert profile_status(profile, new_hash) == (True, "valid"), key
        assert profile["rescoredFrom"] == 1
        scores = {t["name"]: t["score"] for t in profile["testResults"]}
        assert scores["frase_8_parole"] == 0.6  # word_count (weight 2 of 5) now fails
        assert scores["catena_tool_distrattori"] == (1.0 if key.startswith("beta") else 0.63)  # 3 of 8 fail
    assert f"Stored 4 profile(s) for suite {new_hash}" in result.stdout
    listing = invoke("profiles", "--profiles", store, "--suite", suite)
    assert listing.stdout.count("valid") == 4
    assert "stale" not in listing.stdout


def test_a_rescore_is_recorded_as_a_run_of_its_own(measured: tuple[Path, Path, LoopbackServer]) -> None:
    suite, store, _ = measured
    edit(suite, "10_instruction_frase.json", lambda t: t["checks"].pop())

    assert invoke("rescore", "1", "--suite", suite, "--profiles", store).exit_code == 0

    runs = rows(history_of(store), "SELECT id, kind, source_run, suite_hash FROM runs ORDER BY id")
    assert [(r["kind"], r["source_run"]) for r in runs] == [("run", None), ("rescore", 1)]
    assert runs[1]["suite_hash"] == suite_hash(suite)
    shown = invoke("show", "2", "alpha@none", "frase_8_parole", "--profiles", store)
    assert "✓ checks[0] word_count" in shown.stdout
    assert "checks[3]" not in shown.stdout  # the check taken away
    assert "✓ checks[2] last_word" in shown.stdout


@pytest.mark.parametrize(
    ("change", "test"),
    [
        (lambda s: edit(s, "11_instruction_lista.json", lambda t: t.update(prompt=t["prompt"] + " Thanks.")),
         "lista_vincoli_negativi"),
        (lambda s: edit(s, "30_tool_catena.json", lambda t: t["steps"][1].update(toolResult="[]")),
         "catena_tool_distrattori"),
        (lambda s: edit(s, "31_tool_trappola.json", lambda t: t.update(system="Be brief.")), "trappola_astensione"),
        (lambda s: edit(s, "32_tool_write_append.json", lambda t: t["tools"][0]["function"].update(description="W")),
         "tool_write_append"),
        (lambda s: add_test(s, "22_new.json", "json_nuovo"), "json_nuovo"),
    ],
    ids=["prompt", "tool-result", "system", "tools", "new-test"],
)  # fmt: skip
def test_changed_requests_need_a_live_run_and_nothing_is_stored(
    measured: tuple[Path, Path, LoopbackServer], change: Any, test: str
) -> None:
    suite, store, server = measured
    change(suite)
    before, requests = store.read_bytes(), len(server.requests)

    result = invoke("rescore", "last", "--suite", suite, "--profiles", store)

    assert result.exit_code == 1, result.stderr
    assert len(server.requests) == requests
    assert store.read_bytes() == before
    assert "Nothing stored: 1 test(s) need a live run" in result.stdout
    needing = result.stdout.split("Nothing stored:")[1].splitlines()[1:]
    assert len(needing) == 4  # that test, at each of the four levels
    assert all(f" {test}: " in line for line in needing)
    assert rows(history_of(store), "SELECT count(*) FROM runs")[0][0] == 1


def test_dry_run_stores_nothing(measured: tuple[Path, Path, LoopbackServer]) -> None:
    suite, store, _ = measured
    edit(suite, "10_instruction_frase.json", lambda t: t["checks"][0].update(value=9))
    before = store.read_bytes()

    result = invoke("rescore", "last", "--suite", suite, "--profiles", store, "--dry-run")

    assert result.exit_code == 0
    assert "frase_8_parole               0.60" in result.stdout
    assert store.read_bytes() == before
    assert rows(history_of(store), "SELECT count(*) FROM runs")[0][0] == 1


def test_an_unchanged_suite_rescores_to_the_same_profiles(measured: tuple[Path, Path, LoopbackServer]) -> None:
    suite, store, _ = measured
    before = stored(store)

    assert invoke("rescore", "last", "--suite", suite, "--profiles", store).exit_code == 0

    after, section = stored(store), str(suite.resolve())
    assert after["suiteRecommendations"] == before["suiteRecommendations"]
    assert after["suiteProfiles"][section]
    for key, profile in after["suiteProfiles"][section].items():
        old = before["suiteProfiles"][section][key]
        for name in ("tier", "scores", "testResults", "testsHash", "tokensPerSecond", "avgCompletionTokens"):
            assert profile[name] == old[name], (key, name)


def test_a_missing_run_is_one_line(measured: tuple[Path, Path, LoopbackServer]) -> None:
    suite, store, _ = measured
    result = invoke("rescore", "7", "--suite", suite, "--profiles", store)

    assert result.exit_code == 2
    assert "no run '7'" in result.stderr
