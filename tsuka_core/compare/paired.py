"""Whether two measurements of the same tests differ beyond noise: a seeded paired bootstrap of a category's score.

Each resample draws, within the category, as many tests as it has, with
replacement, and takes the *same* draws on both sides; a drawn test run several
times counts with the mean of its runs, redrawn with replacement on each side
apart. The difference of the two resampled category scores is kept; its 2.5th
and 97.5th percentiles are the 95% interval of the difference. The seed is
:data:`~tsuka_core.engine.confidence.SEED`, so the same results always give the
same interval.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

from tsuka_core.engine.confidence import RESAMPLES, SEED, interval, redrawn
from tsuka_core.engine.results import Tries
from tsuka_core.judge.scoring import category_score, mean_score, round_half_up

__all__ = ["NOISE_TEST", "PairedSample", "paired_interval"]

NOISE_TEST = f"paired bootstrap over the common tests ({RESAMPLES} resamples, seed {SEED}, 95% interval)"
"""How the noise test is named in the output and the docs."""


PairedSample = tuple[Tries, Tries]
"""One test measured on both sides: its runs on side A, then on side B."""


def _difference(samples: Sequence[PairedSample]) -> float:
    """Side B's category score minus side A's, each computed as the level computes it."""
    a = category_score([(ta.weight, mean_score(ta.scores)) for ta, _ in samples])
    b = category_score([(tb.weight, mean_score(tb.scores)) for _, tb in samples])
    return round_half_up(b - a)


def paired_interval(
    samples: Sequence[PairedSample], resamples: int = RESAMPLES, seed: int = SEED
) -> tuple[float, float]:
    """The 95% interval of (B's category score minus A's) over ``samples``; it always holds the measured difference.

    Without samples the interval is ``(0, 0)``.
    """
    if not samples:
        return 0.0, 0.0
    ordered = [(_sorted(ta), _sorted(tb)) for ta, tb in samples]
    points = [(mean_score(ta.scores), mean_score(tb.scores)) for ta, tb in ordered]
    rng = random.Random(seed)
    values: list[float] = []
    for _ in range(resamples):
        drawn = rng.choices(range(len(ordered)), k=len(ordered))
        pairs_a = [(ordered[i][0].weight, redrawn(rng, ordered[i][0].scores, points[i][0])) for i in drawn]
        pairs_b = [(ordered[i][1].weight, redrawn(rng, ordered[i][1].scores, points[i][1])) for i in drawn]
        values.append(round_half_up(category_score(pairs_b) - category_score(pairs_a)))
    return interval(values, _difference(ordered))


def _sorted(tries: Tries) -> Tries:
    """``tries`` with its runs in order: run order must not matter."""
    return replace(tries, scores=tuple(sorted(tries.scores)))
