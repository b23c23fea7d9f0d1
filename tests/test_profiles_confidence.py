"""Confidence shown in tsuka profiles (suite, tier confidence, intervals; hostile fields never crash it) and reports."""

from __future__ import annotations

import io
import json
import math
import shutil
import threading
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from answerers import Answerer, by_model, fooled, perfect
from history_helpers import invoke, stored
from loopback import LoopbackServer, Reply
from rich.console import Console

from tsuka_core.cli.profile_table import ProfileTable
from tsuka_core.engine.confidence import BORDERLINE
from tsuka_core.plugins.registry import load_registry
from tsuka_core.record.level import LevelRecord
from tsuka_core.report.html import render_report
from tsuka_core.report.html_view import level_confidence, models_of
from tsuka_core.storage.history import default_history_path
from tsuka_core.storage.history_query import load_run
from tsuka_core.storage.profile_confidence import ABSENT, UNKNOWN, stored_confidence
from tsuka_core.storage.store import ProfileStore, profile_status

ADVICE = f"! borderline: tier confidence under {BORDERLINE}; add --repeats or use the extended suite"


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store of a run of ``sure`` (every answer right) and ``unsure`` (one tool call fooled: borderline)."""
    store = tmp_path_factory.mktemp("confidence") / "models_profile.json"
    with LoopbackServer(by_model({"sure": perfect, "unsure": fooled}), models=["sure", "unsure"]) as server:
        ran = invoke("run", "sure", "unsure", "--base-url", server.base_url, "--profiles", store, "-e", "none")
    assert ran.exit_code == 0, ran.stderr
    return store


def row(stdout: str, key: str) -> tuple[list[str], list[str]]:
    """The cells of the two lines of the table row of ``key``."""
    lines = stdout.splitlines()
    (at,) = [i for i, line in enumerate(lines) if f"│ {key} " in line]
    return cells(lines[at]), cells(lines[at + 1])


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.split("│")[1:-1]]


def copy_with(store: Path, tmp_path: Path, change: dict[str, Any]) -> Path:
    """A copy of ``store`` whose ``unsure@none`` profile has the fields of ``change`` (None deletes one)."""
    data = stored(store)
    entry = data["profiles"]["unsure@none"]
    for name, value in change.items():
        if value is None:
            entry.pop(name, None)
        else:
            entry[name] = value
    copy = tmp_path / "models_profile.json"
    copy.write_text(json.dumps(data), encoding="utf-8")
    return copy


# --- the table of a measured store ----------------------------------------------------------------------------------


def test_each_profile_shows_its_suite_confidence_and_intervals(measured: Path) -> None:
    profiles = stored(measured)["profiles"]
    assert profiles["unsure@none"]["tierConfidence"] < BORDERLINE <= profiles["sure@none"]["tierConfidence"]

    shown = invoke("profiles", "--profiles", measured)

    assert shown.exit_code == 0, shown.stderr
    first, second = row(shown.stdout, "unsure@none *")
    assert first[1:5] == ["medium", "100%", "100%", f"{round(profiles['unsure@none']['scores']['toolCalling'] * 100)}%"]
    low, high = profiles["unsure@none"]["intervals"]["toolCalling"]
    assert second[:5] == ["default", f"{profiles['unsure@none']['tierConfidence']:.2f} !", "100-100", "100-100",
                          f"{round(low * 100)}-{round(high * 100)}"]  # fmt: skip
    assert low < high
    first, second = row(shown.stdout, "sure@none *")
    assert first[1] == "large"
    assert second[:5] == ["default", "1.00", "100-100", "100-100", "100-100"]
    assert shown.stdout.count("!") == 2  # the borderline row and the advice under the table
    assert shown.stdout.splitlines()[-1] == ADVICE


def test_a_borderline_profile_measured_with_repeats_asks_for_more(measured: Path, tmp_path: Path) -> None:
    store = copy_with(measured, tmp_path, {"repeats": 3})

    shown = invoke("profiles", "--profiles", store)

    assert shown.stdout.splitlines()[-1] == ADVICE.replace("add --repeats", "add more --repeats")


def test_without_a_borderline_profile_there_is_no_advice(measured: Path) -> None:
    shown = invoke("profiles", "sure", "--profiles", measured)

    assert shown.exit_code == 0, shown.stderr
    assert "borderline" not in shown.stdout
    assert "!" not in shown.stdout


def test_a_profile_without_confidence_shows_none_and_is_not_borderline(measured: Path, tmp_path: Path) -> None:
    """As written by older versions or the reference tool: no intervals, no tierConfidence, no suite."""
    store = copy_with(measured, tmp_path, {"intervals": None, "tierConfidence": None, "suite": None})

    shown = invoke("profiles", "unsure", "--profiles", store)

    assert shown.exit_code == 0, shown.stderr
    first, second = row(shown.stdout, "unsure@none *")
    assert first[1:3] == ["medium", "100%"]
    assert first[-1] == "valid"
    assert second == ["", "", "", "", "", "", stored(store)["profiles"]["unsure@none"]["testedAt"]]
    assert "borderline" not in shown.stdout


def test_the_table_fits_100_columns_with_every_interval_whole(measured: Path) -> None:
    data = ProfileStore(measured).read()
    rows = ProfileTable(data, lambda entry: profile_status(entry, "7c90f8e0"), str(measured))
    for key, entry in data.profiles.items():
        rows.add(key, entry)
    out = io.StringIO()
    Console(file=out, width=100, color_system=None).print(rows.table)

    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 100
    unsure = stored(measured)["profiles"]["unsure@none"]
    assert any(f"│ {unsure['tierConfidence']:.2f} ! │" in line for line in lines)
    assert sum(line.count("│ 100-100 ") for line in lines) == 5


# --- hostile stores -------------------------------------------------------------------------------------------------

BAD_CONFIDENCE = [7, -0.1, 1.0000001, "0.5", True, [0.5], {"value": 0.5}, 1e999, -1e999]
BAD_INTERVALS = [
    "0.2-0.9",
    [0.1, 0.2, 0.3],
    [0.9, 0.1],
    ["a", "b"],
    [True, False],
    [1e999, 1],
    [0.2],
    {"lo": 0.1, "hi": 0.2},
    None,
    5,
]


@pytest.mark.parametrize("confidence", BAD_CONFIDENCE, ids=repr)
def test_a_malformed_confidence_is_unknown_never_borderline(confidence: object) -> None:
    found = stored_confidence({"tierConfidence": confidence, "intervals": {"json": [0.1, 0.2]}})

    assert found.tier_confidence is UNKNOWN
    assert not found.borderline
    assert found.intervals["json"] == (0.1, 0.2)


def test_nan_is_unknown_and_a_believable_value_is_kept() -> None:
    assert stored_confidence({"tierConfidence": math.nan}).tier_confidence is UNKNOWN
    assert stored_confidence({"intervals": {"json": [math.nan, 1]}}).intervals["json"] is UNKNOWN
    low = stored_confidence({"tierConfidence": 0.5, "intervals": {"json": [0, 1]}})
    assert low.tier_confidence == 0.5
    assert low.borderline
    assert low.intervals == {"instruction": ABSENT, "json": (0.0, 1.0), "toolCalling": ABSENT}
    assert not stored_confidence({"tierConfidence": BORDERLINE}).borderline
    assert not stored_confidence("not a profile").borderline


@pytest.mark.parametrize("interval", BAD_INTERVALS, ids=repr)
def test_a_malformed_interval_is_unknown(interval: object) -> None:
    found = stored_confidence({"tierConfidence": 0.9, "intervals": {"json": interval, "instruction": [0, 1]}})

    assert found.intervals["json"] is UNKNOWN
    assert found.intervals["instruction"] == (0.0, 1.0)
    assert found.tier_confidence == 0.9


def test_intervals_that_are_not_an_object_are_all_unknown() -> None:
    for value in ("x", [[0, 1], [0, 1], [0, 1]], 3):
        assert set(stored_confidence({"intervals": value}).intervals.values()) == {UNKNOWN}


def test_hostile_fields_are_shown_as_unknown_text(measured: Path, tmp_path: Path) -> None:
    change = {
        "tierConfidence": 7,
        "intervals": {"instruction": "[/x]", "json": [0.1, 0.2, 0.3], "toolCalling": [12345.5, 1]},
        "suite": ["[/y]"],
        "tier": "[/tier]",
        "tokensPerSecond": "[bold]fast[/bold]",
        "testsHash": "[/hash]",
    }
    store = copy_with(measured, tmp_path, change)
    data = stored(store)
    data["profiles"]["[/key]@none"] = "[/not a profile]"
    store.write_text(json.dumps(data).replace("12345.5", "1e999"), encoding="utf-8")  # a JSON number, Python's inf

    shown = invoke("profiles", "--profiles", store)

    assert shown.exit_code == 0, shown.stderr
    first, second = row(shown.stdout, "unsure@none *")
    assert first[1] == "[/tier]"
    assert first[5] == "[bold]fast[/bold]"
    assert second[:5] == ["?", "?", "?", "?", "?"]
    assert "[/key]@none" in shown.stdout
    assert "borderline" not in shown.stdout


# --- the suite a profile names --------------------------------------------------------------------------------------


def test_a_suite_chosen_by_name_is_recorded_by_name_and_one_chosen_by_folder_by_its_path(tmp_path: Path) -> None:
    extended = load_registry().suites["extended"].path
    copy = shutil.copytree(extended, tmp_path / "my-extended")
    by_name, by_path = tmp_path / "by_name.json", tmp_path / "by_path.json"
    with LoopbackServer(perfect, models=["m1"]) as server:
        for store, chosen in ((by_name, "extended"), (by_path, str(copy))):
            at = ("--base-url", server.base_url, "--profiles", store)
            ran = invoke("run", "m1", "-e", "none", *at, "--suite", chosen)
            assert ran.exit_code == 0, ran.stderr

    assert stored(by_name)["suiteProfiles"]["extended"]["m1@none"]["suite"] == "extended"
    assert stored(by_path)["suiteProfiles"][str(copy.resolve())]["m1@none"]["suite"] == str(copy.resolve())
    for store, suite in ((by_name, "extended"), (by_path, str(copy.resolve()))):
        shown = invoke("profiles", "--profiles", store)
        assert shown.exit_code == 0, shown.stderr
        lines = shown.stdout.splitlines()
        (at,) = [i for i, line in enumerate(lines) if "│ m1@none *" in line]
        below = lines[at + 1 : next(i for i, line in enumerate(lines) if line.startswith("└"))]
        assert "".join(cells(line)[0] for line in below) == suite  # a long folder is folded, never cut
        assert cells(lines[at])[-1] == "valid"
        assert invoke("tier", "m1", "--profiles", store, "--suite", suite).stderr.startswith("m1@none: valid")


def test_a_profile_naming_an_unknown_suite_is_judged_against_the_installed_one(measured: Path, tmp_path: Path) -> None:
    store = copy_with(measured, tmp_path, {"suite": "no-such-suite"})

    shown = invoke("profiles", "unsure", "--profiles", store)

    first, second = row(shown.stdout, "unsure@none *")
    assert second[0] == "no-such-suite"
    assert first[-1] == "valid"  # measured with the installed suite, whose hash it carries


# --- the HTML report ------------------------------------------------------------------------------------------------


def right_then_fooled() -> Answerer:
    """Answer each conversation right the first time it is asked and like ``fooled`` after: repeats differ."""
    asked: Counter[str] = Counter()
    lock = threading.Lock()

    def answer(body: dict[str, Any], n: int) -> Reply:
        key = repr((body["model"], body.get("reasoning_effort"), body["messages"]))
        with lock:
            asked[key] += 1
            first = asked[key] == 1
        return perfect(body, n) if first else fooled(body, n)

    return answer


@pytest.mark.parametrize("repeats", ["1", "3"])
def test_the_reports_intervals_are_the_profiles_of_the_same_run(repeats: str, tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    answers = by_model({"sure": perfect, "unsure": fooled, "varying": right_then_fooled()})
    with LoopbackServer(answers, models=["sure", "unsure", "varying"]) as server:
        ran = invoke("run", "all", "--base-url", server.base_url, "--profiles", store, "-e", "none", "-e", "low",
                     "--repeats", repeats)  # fmt: skip
    assert ran.exit_code == 0, ran.stderr
    profiles = stored(store)["profiles"]

    views = models_of(load_run(default_history_path(store), "last"))

    compared = 0
    for view in views:
        for level in view.levels:
            sure = view.sure(level)
            assert sure is not None
            profile = profiles[level.key]
            assert sure.tier_confidence == profile["tierConfidence"], level.key
            assert {c: list(v) for c, v in sure.intervals.items()} == profile["intervals"], level.key
            compared += 1
    assert compared == 6
    assert {profiles[f"{m}@none"]["tierConfidence"] < BORDERLINE for m in ("sure", "unsure")} == {True, False}
    page = render_report(load_run(default_history_path(store), "last"))
    assert f"{profiles['unsure@none']['tierConfidence']:.2f} borderline</span>" in page


def test_a_level_with_errored_tests_or_no_tier_has_no_confidence(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    with LoopbackServer(fooled, models=["m1"]) as server:
        assert invoke("run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none").exit_code == 0
    level = load_run(default_history_path(store), "last").levels[0]
    assert level_confidence(level) is not None

    assert level_confidence(replace(level, status="partial")) is None
    assert level_confidence(replace(level, status="unmeasured")) is None
    stored_record = level.record.stored()
    for left_out in ("tierConfidence", "intervals"):
        record = LevelRecord.parse({k: v for k, v in stored_record.items() if k != left_out})
        assert level_confidence(replace(level, record=record)) is None, left_out
    one_missing = {**stored_record, "intervals": {"instruction": [0, 1], "json": [0, 1]}}
    assert level_confidence(replace(level, record=LevelRecord.parse(one_missing))) is None
