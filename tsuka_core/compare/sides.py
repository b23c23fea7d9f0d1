"""The two sides ``tsuka compare`` reads: a recorded run of the history, or a stored profile, as levels of tests.

A reference written as a number, ``last`` or ``last~N`` names a run; anything
else names a profile: ``MODEL@EFFORT``, or ``MODEL`` alone for the profile of
its recommended effort.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tsuka_core.compare.model import SideInfo, TestStatus
from tsuka_core.compare.settings import profile_settings, run_settings
from tsuka_core.engine.results import Tries
from tsuka_core.errors import StoreError, SuiteError, UsageError
from tsuka_core.judge.scoring import mean_score
from tsuka_core.storage.history_query import StoredLevel, StoredTest, StoredTestRuns, is_run_ref, load_run
from tsuka_core.storage.profile import Profile, StoredTestResult
from tsuka_core.storage.store import BENCHMARK_VERSION, ProfileStore, StoreData, profile_key
from tsuka_core.suite.identity import SuiteHashes, suite_label

__all__ = ["Side", "SideCheck", "SideLevel", "SideTest", "load_side", "suite_weights"]

Weights = Callable[[Profile], Mapping[str, float] | None]
"""The test weights of the suite a profile was measured with, or None when that suite is not at hand."""


@dataclass(frozen=True)
class SideCheck:
    """One check of a recorded test: passed only when it passed in every run; otherwise the first run's outcome."""

    location: str
    type: str
    status: str
    detail: str


@dataclass(frozen=True)
class SideTest:
    """One test of one level of a side: its category, weight, every run's score and whether it passed."""

    name: str
    category: str
    weight: float
    runs: tuple[float, ...]
    status: TestStatus
    checks: tuple[SideCheck, ...] = ()
    """Runs only: each check's outcome (profiles keep no checks)."""
    recorded: tuple[StoredTest, ...] = ()
    """Runs only: every recorded run of the test, with its transcript."""

    @property
    def tries(self) -> Tries:
        """Its runs as the statistics see them."""
        return Tries(self.name, self.category, self.weight, self.runs)

    @property
    def score(self) -> float:
        """The score the level counted: the mean of the runs' scores."""
        return mean_score(self.runs)


@dataclass(frozen=True)
class SideLevel:
    """One model@effort of a side, with its tier and category scores as measured."""

    key: str
    tier: str
    scores: Mapping[str, float]
    tests: tuple[SideTest, ...]

    def test(self, name: str) -> SideTest | None:
        """The test called ``name``, or None."""
        return next((t for t in self.tests if t.name == name), None)


@dataclass(frozen=True)
class Side:
    """A run or a profile, as levels of tests, with what it was measured with."""

    info: SideInfo
    levels: tuple[SideLevel, ...]
    notes: tuple[str, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    """What it was measured with (``compare.settings``): backend, server, token limit, sampling, repeats."""

    def level(self, key: str) -> SideLevel | None:
        """The level ``model@effort``, or None."""
        return next((lv for lv in self.levels if lv.key == key), None)


def load_side(ref: str, history: Path, store: Path, weights: Weights | None = None) -> Side:
    """The run or profile ``ref`` names; UsageError (one line) when there is none.

    ``weights`` gives a profile's test weights (profiles do not keep them); each test weighs 1 without them.
    """
    if is_run_ref(ref):
        return _run_side(ref, history)
    return _profile_side(ref, store, weights or suite_weights)


# --- runs -----------------------------------------------------------------------------------------------------------


def _run_side(ref: str, history: Path) -> Side:
    run = load_run(history, ref)
    suite = suite_label(Path(run.suite_path)) if run.suite_path else ""
    info = SideInfo("run", ref, f"run {run.id}", run.suite_hash, suite, run.started_at)
    notes = [f"run {run.id} is {run.status}"] if run.status != "ok" else []
    return Side(info, tuple(_run_level(level) for level in run.levels), tuple(notes), run_settings(run))


def _run_level(level: StoredLevel) -> SideLevel:
    return SideLevel(level.key, level.tier, dict(level.scores), tuple(_run_test(g) for g in level.per_test))


def _run_test(group: StoredTestRuns) -> SideTest:
    checks = _checks(group.runs)
    if group.status != "ok" or any(c.status == "errored" for c in checks):
        status: TestStatus = "error"
    else:
        status = "pass" if all(c.status == "passed" for c in checks) else "fail"
    first = group.first
    return SideTest(first.name, first.category, first.weight, tuple(group.scores), status, checks, group.runs)


def _checks(runs: Sequence[StoredTest]) -> tuple[SideCheck, ...]:
    """Each check once, by location: passed when it passed in every run, else its first other outcome."""
    found: dict[str, SideCheck] = {}
    for test in runs:
        prefix = f"run {test.repeat}: " if len(runs) > 1 else ""
        for step in test.steps:
            for check in step.checks:
                kept = found.get(check.location)
                if kept is None or (kept.status == "passed" and check.status != "passed"):
                    detail = check.detail if check.status == "passed" else prefix + check.detail
                    found[check.location] = SideCheck(check.location, check.type, check.status, detail)
    return tuple(found.values())


# --- profiles -------------------------------------------------------------------------------------------------------


def _profile_side(ref: str, store: Path, weights: Weights) -> Side:
    data = _holding(ProfileStore(store).read(), ref)
    key = _profile_key(ref, store, data.profiles, data.recommendations)
    profile = data.profiles.get(key)
    if profile is None or not profile.is_profile:
        raise UsageError(f"no profile {key!r} in {store} ('tsuka profiles' lists them)")
    stored_hash, tested_at = str(profile.found("testsHash") or ""), str(profile.found("testedAt") or "")
    info = SideInfo("profile", ref, f"profile {key}", stored_hash, profile.suite or "", tested_at)
    notes: list[str] = []
    if profile.benchmark_version != BENCHMARK_VERSION:
        notes.append(f"{info.label} was measured by benchmark version {profile.found('benchmarkVersion')}")
    known = weights(profile)
    if known is None:
        notes.append(f"{info.label}: its suite is not at hand, so each test weighs 1 in the noise test")
    tests = tuple(_profile_test(entry, i, key, store, known or {}) for i, entry in _entries(profile, key, store))
    scores = {c: float(s) for c, s in (profile.scores or {}).items()}
    level = SideLevel(key, profile.tier or "", scores, tests)
    return Side(info, (level,), tuple(notes), profile_settings(profile))


def _holding(data: StoreData, ref: str) -> StoreData:
    """The suite view holding ``ref`` (``MODEL@EFFORT`` or ``MODEL``): the default one, else the latest measured."""
    holding = [view for view in data.by_suite() if ref in view.profiles or ref in view.recommendations]
    if not holding or holding[0] is data:
        return data

    def measured_at(view: StoreData) -> str:
        effort = view.recommendations.get(ref)
        profile = view.profiles.get(ref) or view.profiles.get(profile_key(ref, str(effort)))
        return (profile.tested_at if profile is not None else None) or ""

    return max(holding, key=measured_at)


def _profile_key(ref: str, store: Path, profiles: Mapping[str, Profile], recommendations: Mapping[str, Any]) -> str:
    """``ref`` itself when it names a profile, else the key of that model's recommended effort."""
    if ref in profiles or "@" in ref:
        return ref
    effort = recommendations.get(ref)
    if isinstance(effort, str):
        return profile_key(ref, effort)
    known = sorted(k for k in profiles if k.rpartition("@")[0] == ref)
    if known:
        raise UsageError(f"{store} recommends no effort for {ref!r}; name one of its profiles: {', '.join(known)}")
    raise UsageError(f"no run or profile {ref!r}: a run is a number, 'last' or 'last~N'; a profile is MODEL@EFFORT")


def _entries(profile: Profile, key: str, store: Path) -> list[tuple[int, StoredTestResult]]:
    if profile.test_results is None:
        raise StoreError(f"{store}: profile {key}: testResults is not a list; it cannot be compared")
    return list(enumerate(profile.test_results))


def _profile_test(entry: StoredTestResult, index: int, key: str, store: Path, weights: Mapping[str, float]) -> SideTest:
    where = f"{store}: profile {key}: testResults[{index}]"
    if not entry.is_object:
        raise StoreError(f"{where} is not an object; it cannot be compared")
    if entry.name is None or entry.category is None or not entry.usable:
        raise StoreError(f"{where} needs a name, a category and a numeric score; it cannot be compared")
    scores = entry.run_scores
    status: TestStatus = "pass" if all(r >= 1.0 for r in scores) else "fail"
    return SideTest(entry.name, entry.category, float(weights.get(entry.name, 1.0)), scores, status)


def suite_weights(profile: Profile) -> Mapping[str, float] | None:
    """The test weights of the suite ``profile`` names (else the installed one), when its hash is the profile's."""
    from tsuka_core.suite.loading import load_suite

    hashes = SuiteHashes()
    try:
        if hashes(profile.suite) != profile.tests_hash:
            return None
        suite = load_suite(hashes.folder(profile.suite))
    except (SuiteError, OSError):
        return None
    return {test.name: test.weight for test in suite.tests}
