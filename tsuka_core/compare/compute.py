"""Computing a :class:`~tsuka_core.compare.model.Comparison` from two sides: pairing, deltas and noise."""

from __future__ import annotations

from collections.abc import Sequence

from tsuka_core.compare.model import (
    CategoryDelta,
    CheckFlip,
    Comparison,
    Direction,
    LevelComparison,
    PassHatKChange,
    TestChange,
)
from tsuka_core.compare.paired import NOISE_TEST, paired_interval
from tsuka_core.compare.resolution import detectable_drop
from tsuka_core.compare.settings import differences
from tsuka_core.compare.sides import Side, SideLevel, SideTest
from tsuka_core.engine.reliability import reliability
from tsuka_core.errors import UsageError
from tsuka_core.judge.scoring import category_score, round_half_up, tier_for
from tsuka_core.terms import CATEGORIES

__all__ = ["compare", "pair_levels"]

Pair = tuple[SideTest, SideTest]


def compare(a: Side, b: Side, *, common_tests: bool = False) -> Comparison:
    """Side A against side B, level by level; UsageError when their suites differ and not ``common_tests``.

    With ``common_tests``, only the tests both sides have (matched by name) are
    compared; where the sides' tests differ, category scores and tiers are
    recomputed on the common tests for both sides.
    """
    pairs, unpaired_a, unpaired_b = pair_levels(a.levels, b.levels)
    _check_common(a, b, pairs)
    if a.info.suite_hash != b.info.suite_hash and not common_tests:
        raise UsageError(
            f"{a.info.label} was measured with suite {a.info.suite_hash or '?'} and {b.info.label} with suite "
            f"{b.info.suite_hash or '?'}; compare only the tests both have with --common-tests"
        )
    levels = tuple(_level(la, lb) for la, lb in pairs)
    changed = tuple(differences(a.settings, b.settings))
    notes = [*a.notes, *b.notes]
    if changed:
        notes.append(
            f"{a.info.label} and {b.info.label} were measured with different settings ({'; '.join(changed)}): "
            "a change of score may come from them, not from the model"
        )
    for level in levels:
        if level.only_a or level.only_b:
            notes.append(
                f"{level.label}: category scores and tiers recomputed on the {level.tests_compared} common tests "
                f"({len(level.only_a)} only in {a.info.label}, {len(level.only_b)} only in {b.info.label})"
            )
    return Comparison(
        side_a=a.info,
        side_b=b.info,
        common_tests_only=common_tests,
        levels=levels,
        noise_test=NOISE_TEST,
        notes=tuple(notes),
        unpaired_a=unpaired_a,
        unpaired_b=unpaired_b,
        settings_changed=changed,
    )


def _check_common(a: Side, b: Side, pairs: Sequence[tuple[SideLevel, SideLevel]]) -> None:
    """UsageError naming both suites when the paired levels have tests but not one in common."""
    names = [({t.name for t in la.tests}, {t.name for t in lb.tests}) for la, lb in pairs]
    if not any(na and nb for na, nb in names) or any(na & nb for na, nb in names):
        return
    raise UsageError(
        f"{a.info.label} (suite {_suite(a)}) and {b.info.label} (suite {_suite(b)}) have no test in common: "
        "nothing can be compared; compare two measurements of one suite"
    )


def _suite(side: Side) -> str:
    """A side's suite as the output names it: its name or folder, and its hash."""
    name = f"{side.info.suite}, " if side.info.suite else ""
    return f"{name}{side.info.suite_hash or '?'}"


def pair_levels(
    a: Sequence[SideLevel], b: Sequence[SideLevel]
) -> tuple[list[tuple[SideLevel, SideLevel]], tuple[str, ...], tuple[str, ...]]:
    """Levels paired, and the keys of those left unpaired on each side.

    One level on each side is paired whatever its key; two sides of one model
    each (two different models) are paired by effort; otherwise levels are
    paired by ``model@effort``.
    """
    if len(a) == 1 and len(b) == 1:
        return [(a[0], b[0])], (), ()
    one_model = len({_model(lv) for lv in a}) == 1 and len({_model(lv) for lv in b}) == 1
    same = _effort if one_model else _key
    by_b = {same(level): level for level in b}
    pairs = [(level, by_b[same(level)]) for level in a if same(level) in by_b]
    paired_a, paired_b = {id(x) for x, _ in pairs}, {id(y) for _, y in pairs}
    return (
        pairs,
        tuple(lv.key for lv in a if id(lv) not in paired_a),
        tuple(lv.key for lv in b if id(lv) not in paired_b),
    )


def _key(level: SideLevel) -> str:
    return level.key


def _model(level: SideLevel) -> str:
    return level.key.rpartition("@")[0]


def _effort(level: SideLevel) -> str:
    return level.key.rpartition("@")[2]


def _level(a: SideLevel, b: SideLevel) -> LevelComparison:
    names_b = {t.name for t in b.tests}
    names_a = {t.name for t in a.tests}
    pairs: list[Pair] = []
    for test in a.tests:
        other = b.test(test.name) if test.name in names_b else None
        if other is not None:
            pairs.append((test, other))
    only_a = tuple(t.name for t in a.tests if t.name not in names_b)
    only_b = tuple(t.name for t in b.tests if t.name not in names_a)
    recompute = bool(only_a or only_b)
    categories = tuple(_delta(c, a, b, [p for p in pairs if p[0].category == c], recompute) for c in CATEGORIES)
    tier_a, tier_b = a.tier, b.tier
    if recompute:
        tier_a = tier_for({c: d.score_a for c, d in zip(CATEGORIES, categories, strict=True)})
        tier_b = tier_for({c: d.score_b for c, d in zip(CATEGORIES, categories, strict=True)})
    changes = tuple(change for ta, tb in pairs if (change := _change(ta, tb)) is not None)
    reliable = _pass_hat_k(pairs)
    return LevelComparison(a.key, b.key, tier_a, tier_b, categories, changes, len(pairs), only_a, only_b, reliable)


def _pass_hat_k(pairs: Sequence[Pair]) -> tuple[PassHatKChange, ...]:
    """pass^1 and pass^k of each category on the common tests, k the most runs both sides have; none with one run."""
    found_a = reliability([ta.tries for ta, _ in pairs])
    found_b = reliability([tb.tries for _, tb in pairs])
    if found_a is None or found_b is None:
        return ()
    k = min(found_a.runs, found_b.runs)
    changes = []
    for category in found_a.by_category:
        first_a, first_b = found_a.at(category, 1), found_b.at(category, 1)
        last_a, last_b = found_a.at(category, k), found_b.at(category, k)
        if first_a is None or first_b is None or last_a is None or last_b is None:
            continue
        changes.append(PassHatKChange(category, k, first_a, first_b, last_a, last_b))
    return tuple(changes)


def _delta(category: str, a: SideLevel, b: SideLevel, pairs: Sequence[Pair], recompute: bool) -> CategoryDelta:
    """One category: both scores (as measured, or on the common tests), the difference and its interval."""
    own_a = category_score([(ta.weight, ta.score) for ta, _ in pairs])
    own_b = category_score([(tb.weight, tb.score) for _, tb in pairs])
    score_a = own_a if recompute else a.scores.get(category, own_a)
    score_b = own_b if recompute else b.scores.get(category, own_b)
    difference = round_half_up(score_b - score_a)
    low, high = paired_interval([(ta.tries, tb.tries) for ta, tb in pairs])
    low, high = min(low, difference), max(high, difference)
    runs = min((min(len(ta.runs), len(tb.runs)) for ta, tb in pairs), default=1) or 1
    return CategoryDelta(
        category,
        score_a,
        score_b,
        difference,
        (low, high),
        low > 0 or high < 0,
        len(pairs),
        runs,
        detectable_drop(len(pairs), runs),
    )


def _change(a: SideTest, b: SideTest) -> TestChange | None:
    """The change of one test between the sides, or None when its status and score are the same."""
    if a.status == b.status and a.score == b.score:
        return None
    direction: Direction = "score"
    if a.status == "pass" and b.status != "pass":
        direction = "pass->fail"
    elif a.status != "pass" and b.status == "pass":
        direction = "fail->pass"
    return TestChange(a.name, a.category, a.score, b.score, a.status, b.status, direction, _flips(a, b))


def _flips(a: SideTest, b: SideTest) -> tuple[CheckFlip, ...]:
    """The checks whose outcome differs between the sides, in A's order then B's own.

    None when a side recorded no check (a profile, or a request that failed): its test status says it all.
    """
    if not a.checks or not b.checks:
        return ()
    checks_a = {c.location: c for c in a.checks}
    checks_b = {c.location: c for c in b.checks}
    flips: list[CheckFlip] = []
    for location in [*checks_a, *(loc for loc in checks_b if loc not in checks_a)]:
        ca, cb = checks_a.get(location), checks_b.get(location)
        status_a = ca.status if ca else "absent"
        status_b = cb.status if cb else "absent"
        if status_a == status_b:
            continue
        kind = ca.type if ca else cb.type if cb else ""
        flips.append(CheckFlip(location, kind, status_a, status_b, ca.detail if ca else "", cb.detail if cb else ""))
    return tuple(flips)
