"""The bootstrap behind score intervals and tier confidence: seeded, honest about its point, exact at the edges."""

from __future__ import annotations

from tsuka_core.engine.confidence import BORDERLINE, Sample, bootstrap
from tsuka_core.judge.scoring import category_score, tier_for
from tsuka_core.terms import CATEGORIES, Category

MIXED = [
    Sample("instruction", 1, (1.0,)),
    Sample("instruction", 2, (0.5,)),
    Sample("instruction", 1, (0.75,)),
    Sample("json", 1, (1.0,)),
    Sample("json", 1, (0.0,)),
    Sample("json", 3, (1.0,)),
    Sample("toolCalling", 1, (1.0,)),
    Sample("toolCalling", 2, (0.67,)),
    Sample("toolCalling", 1, (1.0,)),
]


def points(samples: list[Sample]) -> dict[Category, float]:
    return {c: category_score([(s.weight, s.runs[0]) for s in samples if s.category == c]) for c in CATEGORIES}


def test_same_results_give_the_same_intervals_and_confidence() -> None:
    tier = tier_for(points(MIXED))
    first = bootstrap(MIXED, tier)
    assert bootstrap(list(MIXED), tier) == first
    assert bootstrap(MIXED, tier, seed=7) != first


def test_each_interval_holds_the_measured_score_and_is_a_real_spread() -> None:
    measured = points(MIXED)
    result = bootstrap(MIXED, tier_for(measured))
    for category in CATEGORIES:
        low, high = result.intervals[category]
        assert 0.0 <= low <= measured[category] <= high <= 1.0, category
    assert result.intervals["json"][0] < result.intervals["json"][1]
    assert 0.0 < result.tier_confidence < 1.0


def test_a_level_where_every_test_passes_is_certain() -> None:
    perfect = [Sample(c, w, (1.0,)) for c in CATEGORIES for w in (1, 2, 3)]
    result = bootstrap(perfect, "large")
    assert result.intervals == dict.fromkeys(CATEGORIES, (1.0, 1.0))
    assert result.tier_confidence == 1.0
    assert not result.borderline
    assert result.as_profile() == {
        "intervals": {"instruction": [1.0, 1.0], "json": [1.0, 1.0], "toolCalling": [1.0, 1.0]},
        "tierConfidence": 1.0,
    }


def test_a_category_without_tests_is_zero_and_certain_of_it() -> None:
    result = bootstrap([Sample("json", 1, (1.0,))], "small")
    assert result.intervals["instruction"] == (0.0, 0.0)
    assert result.intervals["json"] == (1.0, 1.0)
    assert result.tier_confidence == 1.0


def test_the_order_of_repeated_runs_does_not_matter() -> None:
    first = [Sample(c, 1, (1.0, 0.0, 0.0)) for c in CATEGORIES]
    second = [Sample(c, 1, (0.0, 0.0, 1.0)) for c in CATEGORIES]
    assert bootstrap(first, "small") == bootstrap(second, "small")


def test_repeated_runs_are_resampled_too() -> None:
    steady = [Sample(c, 1, (0.5, 0.5, 0.5, 0.5)) for c in CATEGORIES]
    shaky = [Sample(c, 1, (1.0, 0.0, 1.0, 0.0)) for c in CATEGORIES]
    assert bootstrap(steady, "small").intervals["json"] == (0.5, 0.5)
    low, high = bootstrap(shaky, "small").intervals["json"]
    assert low < 0.5 < high


def test_a_tier_on_its_boundary_is_borderline() -> None:
    edge = [Sample("toolCalling", 1, (1.0,)), Sample("toolCalling", 1, (0.2,)), Sample("json", 1, (1.0,))]
    tier = tier_for(points(edge))
    assert tier == "medium"
    result = bootstrap(edge, tier)
    assert result.tier_confidence < BORDERLINE
    assert result.borderline
