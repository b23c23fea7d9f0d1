"""The comparison model: pairing levels and tests, category deltas, the paired bootstrap, regressions, JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tsuka_core.compare.compute import compare
from tsuka_core.compare.model import COMPARE_VERSION, CategoryDelta, SideInfo
from tsuka_core.compare.paired import NOISE_TEST, paired_interval
from tsuka_core.compare.sides import Side, SideCheck, SideLevel, SideTest, load_side
from tsuka_core.engine.results import Tries
from tsuka_core.errors import UsageError
from tsuka_core.judge.scoring import category_score


def _test(name: str, score: float, category: str = "instruction", *, runs: Sequence[float] = ()) -> SideTest:
    scores = tuple(runs) or (score,)
    status = "pass" if all(s >= 1.0 for s in scores) else "fail"
    check = SideCheck("checks[0]", "contains", "passed" if status == "pass" else "failed", f"detail {score}")
    return SideTest(name, category, 1.0, scores, status, (check,))  # type: ignore[arg-type]


def _level(key: str, tests: Sequence[SideTest], tier: str = "small") -> SideLevel:
    scores = {
        c: category_score([(t.weight, t.score) for t in tests if t.category == c])
        for c in ("instruction", "json", "toolCalling")
    }
    return SideLevel(key, tier, scores, tuple(tests))


def _side(label: str, *levels: SideLevel, suite: str = "hash1") -> Side:
    return Side(SideInfo("run", label, f"run {label}", suite, "suite", "2026-01-01"), tuple(levels))


def _many(count: int, score: float = 1.0) -> list[SideTest]:
    return [_test(f"t{i}", score) for i in range(count)]


def test_identical_sides_have_no_change_and_no_regression() -> None:
    level = _level("m@none", _many(8))
    found = compare(_side("1", level), _side("2", level))

    (paired,) = found.levels
    assert paired.changed_tests == ()
    assert all(d.difference == 0 and d.interval == (0, 0) and not d.beyond_noise for d in paired.categories)
    assert not found.has_regression
    assert found.noise_test == NOISE_TEST


def test_several_tests_failing_in_one_category_is_a_regression_beyond_noise() -> None:
    before = _level("m@none", _many(8))
    after = _level("m@none", [*_many(4), *[_test(f"t{i}", 0.0) for i in range(4, 8)]])
    found = compare(_side("1", before), _side("2", after))

    (paired,) = found.levels
    instruction = paired.categories[0]
    assert (instruction.score_a, instruction.score_b, instruction.difference) == (1.0, 0.5, -0.5)
    assert instruction.interval[1] < 0
    assert instruction.beyond_noise
    assert instruction.regressed
    assert [t.name for t in paired.changes("pass->fail")] == ["t4", "t5", "t6", "t7"]
    assert found.has_regression
    assert found.regressions() == ("m@none: instruction 1.00 → 0.50 (-0.50, 95% interval " + _span(instruction) + ")",)


def _span(delta: CategoryDelta) -> str:
    low, high = delta.interval
    return f"{low:+.2f} to {high:+.2f}"


def test_one_test_of_many_changing_slightly_is_within_noise() -> None:
    before = _level("m@none", _many(10))
    after = _level("m@none", [*_many(9), _test("t9", 0.75)])
    found = compare(_side("1", before), _side("2", after))

    instruction = found.levels[0].categories[0]
    assert (instruction.score_b, instruction.difference) == (0.98, -0.02)
    assert instruction.interval[0] < 0 <= instruction.interval[1]
    assert not instruction.beyond_noise
    assert not found.has_regression
    (change,) = found.levels[0].changed_tests
    assert (change.name, change.direction, change.score_a, change.score_b) == ("t9", "pass->fail", 1.0, 0.75)
    (flip,) = change.checks
    assert (flip.status_a, flip.status_b, flip.detail_b) == ("passed", "failed", "detail 0.75")


def test_an_improvement_is_no_regression_and_goes_fail_to_pass() -> None:
    before = _level("m@none", _many(6, 0.0))
    after = _level("m@none", _many(6))
    found = compare(_side("1", before), _side("2", after))

    assert found.levels[0].categories[0].improved
    assert not found.has_regression
    assert len(found.levels[0].changes("fail->pass")) == 6


def test_a_tier_drop_is_a_regression_even_within_noise() -> None:
    found = compare(_side("1", _level("m@none", _many(3), "large")), _side("2", _level("m@none", _many(3), "medium")))

    assert found.levels[0].tier_dropped
    assert found.regressions() == ("m@none: tier large → medium",)


def test_the_bootstrap_is_seeded_and_resamples_repeated_runs() -> None:
    samples = [(Tries("", "json", 1.0, (1.0,)), Tries("", "json", 1.0, (1.0, 0.0, 1.0))) for _ in range(5)]
    first = paired_interval(samples)

    assert first == paired_interval(samples)
    single = paired_interval([(Tries("", "json", 1.0, (1.0,)), Tries("", "json", 1.0, (0.67,)))] * 5)
    assert single == (-0.33, -0.33)  # the same mean measured once per test: no spread to resample
    assert first[0] < -0.33 < first[1] < 0  # each run redrawn: a wider interval, still below 0
    assert paired_interval([(Tries("", "json", 1.0, (1.0,)), Tries("", "json", 1.0, (1.0,)))] * 5) == (0.0, 0.0)
    assert paired_interval([]) == (0.0, 0.0)


def test_different_suites_are_refused_unless_common_tests() -> None:
    a = _side("1", _level("m@none", _many(4)), suite="aaa")
    b = _side("2", _level("m@none", [*_many(3), _test("new", 0.0)]), suite="bbb")

    with pytest.raises(UsageError, match=r"suite aaa .* suite bbb; compare only the tests both have with --common"):
        compare(a, b)
    found = compare(a, b, common_tests=True)
    (paired,) = found.levels
    assert (paired.only_a, paired.only_b, paired.tests_compared) == (("t3",), ("new",), 3)
    assert paired.categories[0].score_b == 1.0  # recomputed on the common tests: "new" failing does not count
    assert found.common_tests_only
    assert any("recomputed on the 3 common tests" in note for note in found.notes)


def test_levels_pair_by_key_and_the_rest_are_listed_unpaired() -> None:
    a = _side("1", _level("m@none", _many(2)), _level("m@low", _many(2)))
    b = _side("2", _level("m@low", _many(2)), _level("n@none", _many(2)))
    found = compare(a, b)

    assert [(lv.key_a, lv.key_b) for lv in found.levels] == [("m@low", "m@low")]
    assert (found.unpaired_a, found.unpaired_b) == (("m@none",), ("n@none",))


def test_two_models_of_several_efforts_each_are_paired_by_effort() -> None:
    a = _side("1", _level("m@none", _many(2)), _level("m@low", _many(2)))
    b = _side("2", _level("n@low", _many(2)), _level("n@xhigh", _many(2)))
    found = compare(a, b)

    assert [lv.label for lv in found.levels] == ["m@low → n@low"]
    assert (found.unpaired_a, found.unpaired_b) == (("m@none",), ("n@xhigh",))


def test_one_level_on_each_side_is_paired_whatever_its_key() -> None:
    found = compare(_side("1", _level("m@none", _many(2))), _side("2", _level("n@high", _many(2))))

    assert [lv.label for lv in found.levels] == ["m@none → n@high"]


def test_the_json_has_the_documented_shape() -> None:
    before = _level("m@none", _many(8))
    after = _level("m@none", [*_many(4), *[_test(f"t{i}", 0.0) for i in range(4, 8)]])
    data = compare(_side("1", before), _side("2", after)).to_json()

    json.dumps(data)  # plain JSON types only
    assert data["compareVersion"] == COMPARE_VERSION
    assert set(data) == {
        "compareVersion", "a", "b", "settingsChanged", "commonTestsOnly", "noiseTest", "hasRegression",
        "onlyTierDropsFail", "regressions", "notes", "levels", "unpairedA", "unpairedB",
    }  # fmt: skip
    assert data["a"] == {
        "kind": "run", "ref": "1", "label": "run 1", "testsHash": "hash1", "suite": "suite", "measuredAt": "2026-01-01"
    }  # fmt: skip
    (level,) = data["levels"]
    assert level["categories"][0]["regressed"] is True
    assert level["categories"][0]["difference"] == -0.5
    assert level["categories"][0]["detectableDrop"] == 0.37  # 3 of 8 tests failing: (5/8)**8 of resamples see none
    assert level["categories"][0]["blind"] is False
    assert level["resolution"].startswith("a category drop smaller than 0.37 is never beyond noise: instruction")
    assert data["onlyTierDropsFail"] is False
    assert level["changedTests"][0] == {
        "name": "t4", "category": "instruction", "scoreA": 1.0, "scoreB": 0.0, "statusA": "pass", "statusB": "fail",
        "direction": "pass->fail",
        "checks": [{"location": "checks[0]", "type": "contains", "statusA": "passed", "statusB": "failed",
                    "detailA": "detail 1.0", "detailB": "detail 0.0"}],
    }  # fmt: skip


def _profile(model: str, effort: str, scores: dict[str, float], **extra: Any) -> dict[str, Any]:
    return {
        "model": model, "tier": "medium", "scores": {"instruction": 1.0, "json": 0.5, "toolCalling": 0.0},
        "testsHash": "h1", "testedAt": "2026-01-02T03:04:05Z", "benchmarkVersion": 6, "reasoningEffort": effort,
        "testResults": [{"name": n, "category": "instruction", "score": s} for n, s in scores.items()], **extra,
    }  # fmt: skip


def test_a_profile_side_reads_its_tests_and_model_alone_means_its_recommended_effort(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    profiles = {
        "m@none": _profile("m", "none", {"a": 1.0, "b": 0.5}),
        "m@low": _profile("m", "low", {"a": 1.0, "b": 1.0}),
    }
    store.write_text(json.dumps({"profiles": profiles, "recommendations": {"m": "low"}}), encoding="utf-8")

    side = load_side("m", tmp_path / "none.sqlite", store, weights=lambda profile: {"a": 2.0})
    (level,) = side.levels
    assert (side.info.kind, side.info.label, side.info.suite_hash, level.key) == (
        "profile",
        "profile m@low",
        "h1",
        "m@low",
    )
    assert [(t.name, t.weight, t.status) for t in level.tests] == [("a", 2.0, "pass"), ("b", 1.0, "pass")]
    none = load_side("m@none", tmp_path / "none.sqlite", store, weights=lambda profile: None)
    assert [t.status for t in none.levels[0].tests] == ["pass", "fail"]
    assert none.notes == ("profile m@none: its suite is not at hand, so each test weighs 1 in the noise test",)
    with pytest.raises(UsageError, match=r"no profile 'm@xhigh' in .*models_profile.json \('tsuka profiles' lists"):
        load_side("m@xhigh", tmp_path / "none.sqlite", store)
    with pytest.raises(UsageError, match="no run or profile 'other'"):
        load_side("other", tmp_path / "none.sqlite", store)
