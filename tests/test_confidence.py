"""The bootstrap behind score intervals and tier confidence: seeded, honest about its point, exact at the edges."""

from __future__ import annotations

from tsuka_core.engine.confidence import BORDERLINE, Tries, bootstrap, interval
from tsuka_core.judge.scoring import category_score, tier_for
from tsuka_core.terms import CATEGORIES, Category

MIXED = [
    Tries("", "instruction", 1, (1.0,)),
    Tries("", "instruction", 2, (0.5,)),
    Tries("", "instruction", 1, (0.75,)),
    Tries("", "json", 1, (1.0,)),
    Tries("", "json", 1, (0.0,)),
    Tries("", "json", 3, (1.0,)),
    Tries("", "toolCalling", 1, (1.0,)),
    Tries("", "toolCalling", 2, (0.67,)),
    Tries("", "toolCalling", 1, (1.0,)),
]


def points(samples: list[Tries]) -> dict[Category, float]:
    return {c: category_score([(s.weight, s.scores[0]) for s in samples if s.category == c]) for c in CATEGORIES}


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


def test_percentiles_that_miss_the_measured_score_are_widened_to_hold_it() -> None:
    """The promise the docs make: the interval always holds the measured score, even when the draws all miss it."""
    above = [0.6] * 10 + [0.7] * 20 + [0.9] * 10
    assert interval(above, 0.25) == (0.25, 0.9)
    assert interval([0.1] * 10 + [0.2] * 30, 0.8) == (0.1, 0.8)
    assert interval([0.4] * 5, 0.9) == (0.4, 0.9)  # one value drawn every time: widened too
    assert interval([], 0.3) == (0.3, 0.3)
    assert interval(above, 0.7) == (0.6, 0.9)  # inside: the percentiles as they are


def test_a_level_where_every_test_passes_is_certain() -> None:
    perfect = [Tries("", c, w, (1.0,)) for c in CATEGORIES for w in (1, 2, 3)]
    result = bootstrap(perfect, "large")
    assert result.intervals == dict.fromkeys(CATEGORIES, (1.0, 1.0))
    assert result.tier_confidence == 1.0
    assert not result.borderline
    assert result.as_profile() == {
        "intervals": {"instruction": [1.0, 1.0], "json": [1.0, 1.0], "toolCalling": [1.0, 1.0]},
        "tierConfidence": 1.0,
    }


def test_a_category_without_tests_is_zero_and_certain_of_it() -> None:
    result = bootstrap([Tries("", "json", 1, (1.0,))], "small")
    assert result.intervals["instruction"] == (0.0, 0.0)
    assert result.intervals["json"] == (1.0, 1.0)
    assert result.tier_confidence == 1.0


def test_the_order_of_repeated_runs_does_not_matter() -> None:
    first = [Tries("", c, 1, (1.0, 0.0, 0.0)) for c in CATEGORIES]
    second = [Tries("", c, 1, (0.0, 0.0, 1.0)) for c in CATEGORIES]
    assert bootstrap(first, "small") == bootstrap(second, "small")


def test_repeated_runs_are_resampled_too() -> None:
    steady = [Tries("", c, 1, (0.5, 0.5, 0.5, 0.5)) for c in CATEGORIES]
    shaky = [Tries("", c, 1, (1.0, 0.0, 1.0, 0.0)) for c in CATEGORIES]
    assert bootstrap(steady, "small").intervals["json"] == (0.5, 0.5)
    low, high = bootstrap(shaky, "small").intervals["json"]
    assert low < 0.5 < high


def test_a_tier_on_its_boundary_is_borderline() -> None:
    edge = [Tries("", "toolCalling", 1, (1.0,)), Tries("", "toolCalling", 1, (0.2,)), Tries("", "json", 1, (1.0,))]
    tier = tier_for(points(edge))
    assert tier == "medium"
    result = bootstrap(edge, tier)
    assert result.tier_confidence < BORDERLINE
    assert result.borderline


def _plain_bootstrap(samples: list[Tries], tier: str) -> tuple[dict[Category, tuple[float, float]], float]:
    """The bootstrap written out test by test, as the module's docstring states it: the reference for its sums."""
    import random

    from tsuka_core.engine.confidence import RESAMPLES, SEED, interval, redrawn
    from tsuka_core.judge.scoring import mean_score, round_half_up

    rng = random.Random(SEED)
    ordered = [Tries("", s.category, s.weight, tuple(sorted(s.scores))) for s in samples]
    by_category = {c: [s for s in ordered if s.category == c] for c in CATEGORIES}
    own = {c: [mean_score(s.scores) for s in tests] for c, tests in by_category.items()}
    drawn: dict[Category, list[float]] = {c: [] for c in CATEGORIES}
    same = 0
    for _ in range(RESAMPLES):
        scores: dict[Category, float] = {}
        for c, tests in by_category.items():
            if not tests:
                scores[c] = 0.0
                continue
            picks = rng.choices(range(len(tests)), k=len(tests))
            scores[c] = category_score([(tests[i].weight, redrawn(rng, tests[i].scores, own[c][i])) for i in picks])
            drawn[c].append(scores[c])
        for c in CATEGORIES:
            if not by_category[c]:
                drawn[c].append(0.0)
        same += tier_for(scores) == tier
    measured = {
        c: category_score(list(zip([s.weight for s in t], own[c], strict=True))) for c, t in by_category.items()
    }
    return {c: interval(drawn[c], measured[c]) for c in CATEGORIES}, round_half_up(same / RESAMPLES)


def test_the_bootstrap_equals_its_test_by_test_statement_once_and_repeated() -> None:
    """Tests run once are summed straight from the draws: the same numbers as scoring each drawn test."""
    import random

    rng = random.Random(3)
    for trial in range(12):
        repeats = (1,) if trial % 2 else (1, 2, 3)
        samples = [
            Tries(
                "",
                rng.choice(CATEGORIES),
                rng.choice((1, 2, 0.5, 1.5)),
                tuple(rng.choice((0.0, 0.33, 0.5, 1.0)) for _ in range(rng.choice(repeats))),
            )
            for _ in range(rng.randint(1, 30))
        ]
        tier = rng.choice(("small", "medium", "large"))
        result = bootstrap(samples, tier)
        assert (result.intervals, result.tier_confidence) == _plain_bootstrap(samples, tier), trial


def test_a_repeated_test_is_redrawn_run_by_run_a_single_run_keeps_its_score() -> None:
    """Two runs are redrawn (as many draws as runs, their mean); one run counts its own score, drawing nothing."""
    import random

    from tsuka_core.engine.confidence import redrawn
    from tsuka_core.judge.scoring import mean_score

    runs = (0.0, 1.0, 1.0)
    twin = random.Random(3)
    assert redrawn(random.Random(3), runs, 0.67) == mean_score(twin.choices(runs, k=3))
    drawn = {redrawn(random.Random(seed), (0.0, 1.0), 0.5) for seed in range(20)}
    assert drawn == {0.0, 0.5, 1.0}  # two runs redrawn: both ends occur, not only the point
    rng = random.Random(1)
    state = rng.getstate()
    assert redrawn(rng, (0.25,), 0.25) == 0.25
    assert rng.getstate() == state  # nothing drawn for a single run


def test_only_complete_levels_carry_a_confidence() -> None:
    from dataclasses import replace

    from tsuka_core.backends.base import BackendConfig
    from tsuka_core.engine.confidence import with_confidence
    from tsuka_core.engine.results import TestResult as Measured
    from tsuka_core.engine.sweep import level_result
    from tsuka_core.suite.loading import load_suite
    from tsuka_core.testing import ScriptedBackend

    suite = load_suite("default")
    ok = tuple(Measured(t, "ok", 1.0) for t in suite.tests)
    complete = level_result(ScriptedBackend({}, BackendConfig()), suite, "m1", "none", True, ok)
    broken = replace(complete, tests=(*ok[:-1], Measured(suite.tests[-1], "error", 0.0, error="refused")))
    done, cut = with_confidence([complete, broken])
    assert done.confidence is not None
    assert cut.confidence is None
