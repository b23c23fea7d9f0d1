"""tsuka compare says what it cannot see: the smallest detectable drop, a blind gate, sides with no test in common."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from answerers import by_model, perfect, tool_shy
from history_helpers import DEFAULT_SUITE, invoke
from loopback import LoopbackServer, Reply

from tsuka_core.cli.exits import BAD_INPUT
from tsuka_core.compare.paired import paired_interval
from tsuka_core.compare.resolution import LEVEL, detectable_drop, spread, zero_chance
from tsuka_core.engine.results import Tries

pytestmark = pytest.mark.usefixtures("fast_retries")


def wrong(body: dict[str, Any], n: int) -> Reply:
    """Answers every request with a word no check accepts."""
    return Reply.text("no")


def run(store: Path, answers: dict[str, Any], *args: str | Path) -> None:
    with LoopbackServer(by_model(answers), models=list(answers)) as server:
        ran = invoke("run", "all", "--base-url", server.base_url, "--profiles", store, "-e", "none", *args)
    assert ran.exit_code == 0, ran.stderr


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run 1: m tool-shy, run 2: m right (default suite); run 3: m right with the extended suite;
    runs 4 and 5: m wrong, then right, on a suite of two instruction and two json tests."""
    folder = tmp_path_factory.mktemp("resolution")
    path, small = folder / "models_profile.json", folder / "small"
    run(path, {"m": tool_shy})
    run(path, {"m": perfect})
    run(path, {"m": perfect}, "--suite", "extended")
    small.mkdir()
    for name in ("10_instruction_frase.json", "11_instruction_lista.json", "20_json_prodotti.json"):
        shutil.copy(DEFAULT_SUITE / name, small / name)
    shutil.copy(DEFAULT_SUITE / "21_json_annidato.json", small / "21_json_annidato.json")
    run(path, {"m": wrong}, "--suite", small)
    run(path, {"m": perfect}, "--suite", small)
    return path


def test_every_comparison_says_the_smallest_drop_it_could_see(store: Path) -> None:
    result = invoke("compare", "1", "2", "--profiles", store, "--json")

    assert result.exit_code == 0, result.stderr
    assert (
        "can see: a category drop smaller than 0.66 is never beyond noise: instruction 1.00 (2 tests × 1 run), "
        "json 1.00 (2 tests × 1 run), toolCalling 0.66 (3 tests × 1 run)"
    ) in " ".join(result.stderr.split())  # as wrapped to the terminal's width
    (level,) = json.loads(result.stdout)["levels"]
    assert [c["detectableDrop"] for c in level["categories"]] == [1.0, 1.0, 0.66]
    assert level["resolution"].startswith("a category drop smaller than 0.66")


def test_the_gate_says_which_categories_it_cannot_see(store: Path) -> None:
    result = invoke("compare", "1", "2", "--profiles", store, "--fail-on-regression")

    assert result.exit_code == 0, result.stderr
    assert result.stderr == (
        "tsuka: m@none: no drop of toolCalling could be beyond noise with these tests; "
        "there --fail-on-regression fires only on a tier drop\n"
    )


def test_a_gate_that_sees_no_category_drop_says_it_fires_only_on_a_tier_drop(store: Path) -> None:
    result = invoke("compare", "4", "5", "--profiles", store, "--fail-on-regression", "--json")

    assert result.exit_code == 0, result.stderr
    assert "tsuka: --fail-on-regression can only fire on a tier drop here" in result.stderr
    assert json.loads(result.stdout)["onlyTierDropsFail"] is True


@pytest.mark.parametrize("common", [[], ["--common-tests"]])
def test_no_test_in_common_is_an_error_naming_both_suites(store: Path, common: list[str]) -> None:
    result = invoke("compare", "2", "3", "--profiles", store, *common)

    assert result.exit_code == BAD_INPUT
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("tsuka: error: run 2 (suite default, ")
    assert ") and run 3 (suite extended, " in line
    assert line.endswith("have no test in common: nothing can be compared; compare two measurements of one suite")


@pytest.mark.parametrize("tests", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("runs", [1, 2, 3, 5])
def test_the_stated_drop_is_one_the_bootstrap_sees_and_one_run_less_it_does_not(tests: int, runs: int) -> None:
    stated = detectable_drop(tests, runs)
    assert stated is not None
    failed = math.ceil(stated * tests * runs - 1e-9)  # the failed runs of the stated drop, rounded down to 2 places

    def interval(total: int) -> tuple[float, float]:
        spread_out = spread(total, tests, runs)
        return paired_interval(
            [
                (Tries("", "json", 1, (1.0,) * runs), Tries("", "json", 1, (0.0,) * j + (1.0,) * (runs - j)))
                for j in spread_out
            ]
        )

    if failed > 1:
        assert interval(failed - 1)[1] == 0  # one failed run fewer: the interval still holds zero
    # the stated drop itself is seen, or misses the 2.5% only within the margin for the resamples' own noise
    assert interval(failed)[1] < 0 or zero_chance(spread(failed, tests, runs), runs) < LEVEL


def test_no_test_means_nothing_is_detectable() -> None:
    assert detectable_drop(0, 3) is None
