"""Scores and tiers: half-up rounding, weighted test and category scores, inclusive tier bounds."""

from __future__ import annotations

import pytest

from tsuka_core.judge.scoring import category_score, round_half_up, tier_for, tier_rank
from tsuka_core.judge.scoring import score_checks as score_of_test
from tsuka_core.terms import Category


@pytest.mark.parametrize(
    ("value", "rounded"),
    [
        (0.125, 0.13),
        (0.875, 0.88),
        (2 / 3, 0.67),
        (1 / 3, 0.33),
        (0.005, 0.01),
        (0.004999, 0.0),
        (0.615, 0.62),
        (1.0, 1.0),
        (0.0, 0.0),
        (7 / 8, 0.88),
        (5 / 8, 0.63),
    ],
)
def test_round_half_up(value: float, rounded: float) -> None:
    assert round_half_up(value) == rounded


def test_round_half_up_other_places() -> None:
    assert round_half_up(2.5, 0) == 3.0
    assert round_half_up(0.0625, 3) == 0.063


@pytest.mark.parametrize(
    ("results", "score"),
    [
        ([(2, False), (1, True), (1, True), (1, True)], 0.6),
        ([(3, True), (2, True), (1, False), (1, True), (1, True), (1, True), (2, True)], 0.91),
        ([(1, True), (1, True), (1, False)], 0.67),
        ([(3, True), (1, True), (1, True), (1, True), (1, False), (1, True), (1, True), (1, True)], 0.9),
        ([(1, True)] * 7 + [(1, False)], 0.88),
        ([(1, False)], 0.0),
        ([(2.5, True), (0.5, False)], 0.83),
        ([], 0.0),
    ],
)
def test_test_score_is_weighted_and_rounded(results: list[tuple[float, bool]], score: float) -> None:
    assert score_of_test(results) == score


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ([(1, 0.6), (1, 1.0)], 0.8),
        ([(2, 0.5), (1, 1.0)], 0.67),
        ([(2, 1.0), (1, 0.0), (2, 0.5)], 0.6),
        ([(1, 0.125)], 0.13),
        ([(3, 0.33), (1, 0.0)], 0.25),
        ([], 0.0),
    ],
)
def test_category_score_is_the_weighted_mean(scores: list[tuple[float, float]], expected: float) -> None:
    assert category_score(scores) == expected


def tier(tools: float, instruction: float, json_: float) -> str:
    scores: dict[Category, float] = {"toolCalling": tools, "instruction": instruction, "json": json_}
    return tier_for(scores)


@pytest.mark.parametrize(
    ("tools", "instruction", "json_", "expected"),
    [
        (0.9, 0.85, 0.85, "large"),
        (1.0, 1.0, 1.0, "large"),
        (0.89, 1.0, 1.0, "medium"),
        (0.9, 0.84, 1.0, "medium"),
        (0.9, 1.0, 0.84, "medium"),
        (0.6, 0.0, 0.5, "medium"),
        (0.59, 1.0, 1.0, "small"),
        (0.6, 1.0, 0.49, "small"),
        (0.0, 0.0, 0.0, "small"),
    ],
)
def test_tier_bounds_are_inclusive(tools: float, instruction: float, json_: float, expected: str) -> None:
    assert tier(tools, instruction, json_) == expected


def test_a_missing_category_scores_zero() -> None:
    assert tier_for({"toolCalling": 1.0, "json": 1.0}) == "medium"
    assert tier_for({"instruction": 1.0, "json": 1.0}) == "small"


def test_tier_rank() -> None:
    assert [tier_rank(t) for t in ("small", "medium", "large", "huge")] == [0, 1, 2, 0]


def test_hand_computed_run_of_the_reference_shape() -> None:
    """A run worked out by hand, test by test, against the reference suite's weights.

    instruction: frase 3/5 = 0.6 (8-word check, weight 2, failed); lista 5/5 = 1.0 -> (0.6 + 1.0) / 2 = 0.8
    json: prodotti 10/11 = 0.909 -> 0.91; annidato 15/17 = 0.882 -> 0.88 -> (0.91 + 0.88) / 2 = 0.895 -> 0.9
    toolCalling: catena (w2) 5/8 = 0.625 -> 0.63; trappola (w1) 1/4 = 0.25; write_append (w2) 11/14 = 0.786 -> 0.79
                 -> (2 * 0.63 + 0.25 + 2 * 0.79) / 5 = 3.09 / 5 = 0.618 -> 0.62
    tier: toolCalling 0.62 >= 0.6 and json 0.9 >= 0.5 -> medium
    """
    frase = score_of_test([(2, False), (1, True), (1, True), (1, True)])
    lista = score_of_test([(2, True), (2, True), (1, True)])
    prodotti = score_of_test([(3, True), (2, True), (1, True), (1, False), (1, True), (1, True), (2, True)])
    annidato = score_of_test(
        [(3, True), (2, True), (2, False), (2, True), (2, True), (1, True)] + [(1, True)] * 5,
    )
    catena = score_of_test([(2, True), (1, True), (2, True), (3, False)])
    trappola = score_of_test([(3, False), (1, True)])
    write_append = score_of_test([(2, True), (2, True), (2, True), (2, True), (2, True), (3, False), (1, True)])
    assert (frase, lista, prodotti, annidato) == (0.6, 1.0, 0.91, 0.88)
    assert (catena, trappola, write_append) == (0.63, 0.25, 0.79)

    scores: dict[Category, float] = {
        "instruction": category_score([(1, frase), (1, lista)]),
        "json": category_score([(1, prodotti), (1, annidato)]),
        "toolCalling": category_score([(2, catena), (1, trappola), (2, write_append)]),
    }
    assert scores == {"instruction": 0.8, "json": 0.9, "toolCalling": 0.62}
    assert tier_for(scores) == "medium"


def test_the_spread_of_repeated_runs_is_their_population_standard_deviation() -> None:
    from tsuka_core.judge.scoring import score_spread

    assert score_spread([1.0]) == 0.0  # one run: no spread
    assert score_spread([]) == 0.0
    assert score_spread([0.0, 1.0]) == 0.5  # two runs are enough to spread
    assert score_spread([0.5, 0.5, 0.5]) == 0.0
    assert score_spread([0.0, 0.0, 1.0]) == 0.47  # sqrt(2/9), half up to two decimals


def test_every_category_is_reported_zero_where_missing_in_report_order() -> None:
    from tsuka_core.judge.scoring import all_categories

    assert all_categories({"json": 0.5}) == {"instruction": 0.0, "json": 0.5, "toolCalling": 0.0}
    assert list(all_categories({"toolCalling": 1.0, "instruction": 0.25})) == ["instruction", "json", "toolCalling"]
