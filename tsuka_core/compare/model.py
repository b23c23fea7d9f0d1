"""What ``tsuka compare`` finds between two measurements: per paired level, tiers, category deltas and changed tests.

The model is computed by :func:`tsuka_core.compare.compute.compare` from
two sides (:mod:`tsuka_core.compare.sides`); :meth:`Comparison.to_json`
gives its stable JSON form (``COMPARE_VERSION``), documented in ``docs/compare.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from tsuka_core.compare.resolution import resolution_line
from tsuka_core.judge.scoring import tier_rank

__all__ = [
    "COMPARE_VERSION",
    "CategoryDelta",
    "CheckFlip",
    "Comparison",
    "Direction",
    "LevelComparison",
    "PassHatKChange",
    "SideInfo",
    "TestChange",
    "TestStatus",
]

COMPARE_VERSION = 1
"""The version of the JSON structure :meth:`Comparison.to_json` writes; raised when a field changes meaning."""

Direction = Literal["pass->fail", "fail->pass", "score"]
"""How a test changed: it stopped passing, started passing, or only its score moved."""

TestStatus = Literal["pass", "fail", "error"]
"""A test passes when every check of every run passed; ``error`` when a run could not be measured."""


@dataclass(frozen=True)
class SideInfo:
    """One side of a comparison: what was named and what it was measured with."""

    kind: Literal["run", "profile"]
    ref: str
    """The reference as given (``3``, ``last~1``, ``model@low``)."""
    label: str
    """How the output names it: ``run 3``, ``profile model@low``."""
    suite_hash: str
    suite: str
    """The suite as a profile names it: ``default`` for the installed suite, else its folder; empty when unknown."""
    measured_at: str
    """When it was measured (a run's start, a profile's ``testedAt``); empty when unknown."""

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "ref": self.ref,
            "label": self.label,
            "testsHash": self.suite_hash,
            "suite": self.suite,
            "measuredAt": self.measured_at,
        }


@dataclass(frozen=True)
class CheckFlip:
    """One check of a changed test whose outcome differs between the sides (runs only: profiles keep no checks)."""

    location: str
    type: str
    status_a: str
    """``passed``, ``failed``, ``errored``, or ``absent`` when that side did not record the check."""
    status_b: str
    detail_a: str
    detail_b: str

    def to_json(self) -> dict[str, Any]:
        return {
            "location": self.location,
            "type": self.type,
            "statusA": self.status_a,
            "statusB": self.status_b,
            "detailA": self.detail_a,
            "detailB": self.detail_b,
        }


@dataclass(frozen=True)
class TestChange:
    """A test measured on both sides whose status or score changed."""

    __test__: ClassVar[bool] = False  # not a pytest test class

    name: str
    category: str
    score_a: float
    score_b: float
    status_a: TestStatus
    status_b: TestStatus
    direction: Direction
    checks: tuple[CheckFlip, ...] = ()
    """The checks whose outcome flipped (a check counts as passed when it passed in every run)."""

    @property
    def difference(self) -> float:
        """B's score minus A's."""
        return round(self.score_b - self.score_a, 2)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "category": self.category,
            "scoreA": self.score_a,
            "scoreB": self.score_b,
            "statusA": self.status_a,
            "statusB": self.status_b,
            "direction": self.direction,
            "checks": [c.to_json() for c in self.checks],
        }


@dataclass(frozen=True)
class CategoryDelta:
    """One category's score on each side, the difference (B minus A) and whether it is beyond noise."""

    category: str
    score_a: float
    score_b: float
    difference: float
    interval: tuple[float, float]
    """The 95% interval of the difference (paired bootstrap); it always holds ``difference``."""
    beyond_noise: bool
    """True when the interval excludes 0."""
    tests: int
    """How many tests of the category were compared."""
    runs: int = 1
    """The fewest runs a compared test of the category has on either side."""
    detectable_drop: float | None = None
    """The smallest drop that could be beyond noise with these tests and runs (:mod:`.resolution`); None: no test."""

    @property
    def blind(self) -> bool:
        """No drop of this category could be beyond noise: no test, or the smallest detectable one exceeds A's score."""
        return self.detectable_drop is None or self.detectable_drop > self.score_a

    @property
    def regressed(self) -> bool:
        """The score dropped beyond noise."""
        return self.beyond_noise and self.difference < 0

    @property
    def improved(self) -> bool:
        """The score rose beyond noise."""
        return self.beyond_noise and self.difference > 0

    def to_json(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "scoreA": self.score_a,
            "scoreB": self.score_b,
            "difference": self.difference,
            "interval": list(self.interval),
            "beyondNoise": self.beyond_noise,
            "regressed": self.regressed,
            "tests": self.tests,
            "runs": self.runs,
            "detectableDrop": self.detectable_drop,
            "blind": self.blind,
        }


@dataclass(frozen=True)
class PassHatKChange:
    """One category's pass^1 and pass^k on each side, k the most runs both sides have (both ran tests twice or more)."""

    category: str
    k: int
    first_a: float
    first_b: float
    last_a: float
    """pass^k of side A."""
    last_b: float

    def to_json(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "k": self.k,
            "passHat1A": self.first_a,
            "passHat1B": self.first_b,
            "passHatKA": self.last_a,
            "passHatKB": self.last_b,
        }


@dataclass(frozen=True)
class LevelComparison:
    """One paired level: side A's ``key_a`` against side B's ``key_b`` (they differ when two models are paired)."""

    key_a: str
    key_b: str
    tier_a: str
    tier_b: str
    categories: tuple[CategoryDelta, ...]
    changed_tests: tuple[TestChange, ...]
    tests_compared: int
    only_a: tuple[str, ...] = ()
    """Tests side A measured that side B did not (only with ``--common-tests``)."""
    only_b: tuple[str, ...] = ()
    pass_hat_k: tuple[PassHatKChange, ...] = ()
    """pass^1 and pass^k per category, when both sides ran each test at least twice."""

    @property
    def label(self) -> str:
        """``m@low`` when both sides name the same level, else ``m@low → n@none``."""
        return self.key_a if self.key_a == self.key_b else f"{self.key_a} → {self.key_b}"

    @property
    def tier_dropped(self) -> bool:
        """Side B's tier is lower than side A's."""
        return tier_rank(self.tier_b) < tier_rank(self.tier_a)

    @property
    def resolution(self) -> str:
        """What this comparison can see: the smallest category drop that could be beyond noise, in one sentence."""
        return resolution_line([(c.category, c.tests, c.runs, c.detectable_drop) for c in self.categories])

    def changes(self, direction: Direction) -> tuple[TestChange, ...]:
        """The changed tests that went ``direction``."""
        return tuple(t for t in self.changed_tests if t.direction == direction)

    def regressions(self) -> tuple[str, ...]:
        """One line per reason this level regressed: its tier dropped, a category dropped beyond noise."""
        found = [f"{self.label}: tier {self.tier_a} → {self.tier_b}"] if self.tier_dropped else []
        for delta in self.categories:
            if delta.regressed:
                low, high = delta.interval
                found.append(
                    f"{self.label}: {delta.category} {delta.score_a:.2f} → {delta.score_b:.2f} "
                    f"({delta.difference:+.2f}, 95% interval {low:+.2f} to {high:+.2f})"
                )
        return tuple(found)

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.key_a,
            "b": self.key_b,
            "tierA": self.tier_a,
            "tierB": self.tier_b,
            "tierDropped": self.tier_dropped,
            "testsCompared": self.tests_compared,
            "resolution": self.resolution,
            "onlyA": list(self.only_a),
            "onlyB": list(self.only_b),
            "categories": [c.to_json() for c in self.categories],
            "changedTests": [t.to_json() for t in self.changed_tests],
            "passHatK": [p.to_json() for p in self.pass_hat_k],
        }


@dataclass(frozen=True)
class Comparison:
    """Two measurements compared: the sides, each paired level, the levels left unpaired, and notes."""

    side_a: SideInfo
    side_b: SideInfo
    common_tests_only: bool
    """Only the tests both sides have were compared (``--common-tests``); category scores and tiers recomputed."""
    levels: tuple[LevelComparison, ...]
    noise_test: str
    """How "beyond noise" was decided (:data:`tsuka_core.compare.paired.NOISE_TEST`)."""
    notes: tuple[str, ...] = ()
    unpaired_a: tuple[str, ...] = ()
    """Levels of side A with no counterpart on side B."""
    unpaired_b: tuple[str, ...] = ()
    settings_changed: tuple[str, ...] = ()
    """Each setting the sides were measured with that differs (``maxTokens 512 → 24``)."""

    def regressions(self) -> tuple[str, ...]:
        """Every reason, one line each, for which ``--fail-on-regression`` fails; and whether settings changed too."""
        found = tuple(line for level in self.levels for line in level.regressions())
        if found and self.settings_changed:
            changed = "; ".join(self.settings_changed)
            found += (f"the drop coincides with changed settings ({changed}): it may come from them, not the model",)
        return found

    @property
    def has_regression(self) -> bool:
        """A tier dropped or a category dropped beyond noise in some paired level."""
        return bool(self.regressions())

    @property
    def only_tier_drops_fail(self) -> bool:
        """No category drop of any level could be beyond noise: ``--fail-on-regression`` fires only on a tier drop."""
        return all(c.blind for level in self.levels for c in level.categories)

    def to_json(self) -> dict[str, Any]:
        """The comparison as JSON-ready data (``compareVersion`` :data:`COMPARE_VERSION`)."""
        return {
            "compareVersion": COMPARE_VERSION,
            "a": self.side_a.to_json(),
            "b": self.side_b.to_json(),
            "settingsChanged": list(self.settings_changed),
            "commonTestsOnly": self.common_tests_only,
            "noiseTest": self.noise_test,
            "hasRegression": self.has_regression,
            "onlyTierDropsFail": self.only_tier_drops_fail,
            "regressions": list(self.regressions()),
            "notes": list(self.notes),
            "levels": [level.to_json() for level in self.levels],
            "unpairedA": list(self.unpaired_a),
            "unpairedB": list(self.unpaired_b),
        }
