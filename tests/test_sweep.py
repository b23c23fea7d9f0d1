"""Sweeps through the Python API against a real server: scores, efforts, refusals, retries, failures, the store."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from answerers import (
    EFFORT_REFUSAL,
    Answerer,
    by_effort,
    by_model,
    failing,
    fooled,
    perfect,
    refusing_effort,
    throttled,
    tool_shy,
    which_test,
)
from loopback import LoopbackServer, Reply

from tsuka_core import EFFORTS, BackendConfig, Registry, RunOptions, RunReport, run_benchmark
from tsuka_core.engine import results
from tsuka_core.suite.loading import default_suite_path
from tsuka_core.suite.model import Suite
from tsuka_core.terms import Effort

DEFAULT_SUITE = default_suite_path()
"""The default suite as installed (in a source checkout, ``benchmarks/``): profiles measured with it are the
default suite's."""
LEVELS = ["none", "low", "medium", "xhigh"]
SPEC_FIELDS = [
    "model",
    "provider",
    "tier",
    "scores",
    "tokensPerSecond",
    "testedAt",
    "benchmarkVersion",
    "testsHash",
    "testResults",
    "reasoningEffort",
    "avgCompletionTokens",
]
TESTS = [
    ("frase_8_parole", "instruction"),
    ("lista_vincoli_negativi", "instruction"),
    ("json_prodotti", "json"),
    ("json_annidato", "json"),
    ("catena_tool_distrattori", "toolCalling"),
    ("trappola_astensione", "toolCalling"),
    ("tool_write_append", "toolCalling"),
]
SHY_FAILURES = [
    ("catena_tool_distrattori", "steps[0].checks[0]", "tool_called"),
    ("catena_tool_distrattori", "steps[0].checks[1]", "tool_arg_regex"),
    ("catena_tool_distrattori", "steps[1].checks[0]", "tool_called"),
    ("catena_tool_distrattori", "steps[1].checks[1]", "tool_arg_equals"),
    ("tool_write_append", "steps[0].checks[0]", "tool_called"),
    ("tool_write_append", "steps[0].checks[1]", "tool_arg_equals"),
    ("tool_write_append", "steps[0].checks[2]", "tool_arg_regex"),
    ("tool_write_append", "steps[1].checks[0]", "tool_called"),
    ("tool_write_append", "steps[1].checks[1]", "tool_arg_equals"),
    ("tool_write_append", "steps[1].checks[2]", "tool_arg_equals"),
    ("tool_write_append", "steps[1].checks[3]", "tool_arg_regex"),
]


pytestmark = pytest.mark.usefixtures("fast_retries")


@dataclass
class Recorder:
    """A sweep observer that remembers what it was told."""

    started: list[tuple[str, str, bool, int]] = field(default_factory=list)
    done: list[tuple[str, str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def level_started(self, model: str, effort: Effort, applied: bool, total: int) -> None:
        self.started.append((model, effort, applied, total))

    def test_done(self, model: str, effort: Effort, result: results.TestResult) -> None:
        self.done.append((model, effort, result.test.name))

    def note(self, message: str) -> None:
        self.notes.append(message)


@dataclass
class Run:
    """One benchmark run: its report, what the server received, what the observer heard, and the store."""

    report: RunReport
    server: LoopbackServer
    observer: Recorder
    store: Path

    @property
    def bodies(self) -> list[Any]:
        return self.server.bodies

    @property
    def stored(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.store.read_text(encoding="utf-8"))
        return data


def benchmark(
    suite: Suite,
    registry: Registry,
    store: Path,
    answerer: Answerer,
    *,
    models: Sequence[str] = ("m1",),
    listed: Sequence[str] = ("m1",),
    efforts: Sequence[Effort] = EFFORTS,
    retries: int = 3,
) -> Run:
    """Run the suite through the whole engine against a loopback server answering with ``answerer``."""
    observer = Recorder()
    with LoopbackServer(answerer, models=listed) as server:
        options = RunOptions(
            models=models,
            config=BackendConfig(base_url=server.base_url, retries=retries, timeout=10),
            efforts=efforts,
            store_path=store,
        )
        report = asyncio.run(run_benchmark(options, suite, registry, observer))
    return Run(report, server, observer, store)


def failures(report: RunReport, model: str, effort: str) -> list[tuple[str, str, str]]:
    level = next(lv for s in report.sweeps for lv in s.levels if lv.model == model and lv.effort == effort)
    return [
        (t.test.name, c.location, c.type)
        for t in level.tests
        for s in t.steps
        for c in s.checks
        if not c.outcome.passed
    ]


def folder_hash(folder: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    for path in sorted(folder.glob("*.json"), key=lambda p: p.name):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()[:8]


def comparable(profiles: dict[str, Any]) -> dict[str, Any]:
    """Profiles without what differs between two identical runs."""
    varying = {"testedAt", "tokensPerSecond", "provider", "speedFigures"}
    return {key: {k: v for k, v in p.items() if k not in varying} for key, p in profiles.items()}


# --- exact scores ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answerer", "test_scores", "scores", "tier", "failed"),
    [
        (perfect, [1, 1, 1, 1, 1, 1, 1], {"instruction": 1, "json": 1, "toolCalling": 1}, "large", []),
        (
            fooled,
            [1, 1, 1, 1, 0.63, 1, 1],
            {"instruction": 1, "json": 1, "toolCalling": 0.85},
            "medium",
            [("catena_tool_distrattori", "steps[1].checks[1]", "tool_arg_equals")],
        ),
        (tool_shy, [1, 1, 1, 1, 0, 1, 0], {"instruction": 1, "json": 1, "toolCalling": 0.2}, "small", SHY_FAILURES),
    ],
    ids=["perfect", "fooled", "tool_shy"],
)
def test_exact_scores_across_the_default_suite(
    suite: Suite,
    registry: Registry,
    tmp_path: Path,
    answerer: Answerer,
    test_scores: list[float],
    scores: dict[str, float],
    tier: str,
    failed: list[tuple[str, str, str]],
) -> None:
    run = benchmark(suite, registry, tmp_path / "models_profile.json", answerer)

    assert run.report.ok
    assert run.report.failed == []
    assert list(run.report.profiles) == [f"m1@{e}" for e in LEVELS]
    expected_results = [
        {"name": name, "category": category, "score": score}
        for (name, category), score in zip(TESTS, test_scores, strict=True)
    ]
    for effort in LEVELS:
        profile = run.report.profiles[f"m1@{effort}"]
        assert profile["tier"] == tier
        assert profile["scores"] == scores
        assert profile["testResults"] == expected_results
        assert profile["reasoningEffort"] == effort
        assert profile["effortApplied"] is True
        assert failures(run.report, "m1", effort) == failed
    assert run.report.recommendations == {"m1": "none"}
    assert run.stored == {"profiles": run.report.profiles, "recommendations": {"m1": "none"}}


def test_tool_shy_answers_leave_the_second_steps_unsent(suite: Suite, registry: Registry, tmp_path: Path) -> None:
    run = benchmark(suite, registry, tmp_path / "p.json", tool_shy, efforts=("low",))

    (level,) = run.report.sweeps[0].levels
    chains = {t.test.name: t for t in level.tests if len(t.steps) == 2}
    assert sorted(chains) == ["catena_tool_distrattori", "tool_write_append"]
    for result in chains.values():
        first, second = result.steps
        assert (first.sent, second.sent) == (True, False)
        assert second.response is None
        assert all(c.outcome.status == "failed" and c.outcome.detail.startswith("not sent") for c in second.checks)
        assert not any(c.outcome.detail.startswith("not sent") for c in first.checks)
    assert len(run.bodies) == 7


# --- efforts --------------------------------------------------------------------------------------------------------


def test_every_request_carries_its_level_verbatim(suite: Suite, registry: Registry, tmp_path: Path) -> None:
    run = benchmark(suite, registry, tmp_path / "p.json", perfect)

    assert len(run.bodies) == 36
    assert all(isinstance(body.get("reasoning_effort"), str) for body in run.bodies)
    assert Counter(body["reasoning_effort"] for body in run.bodies) == dict.fromkeys(LEVELS, 9)
    per_test = Counter((body["reasoning_effort"], which_test(body)[0]) for body in run.bodies)
    for effort in LEVELS:
        assert per_test[(effort, "catena_tool_distrattori")] == 2
        assert per_test[(effort, "tool_write_append")] == 2
        assert per_test[(effort, "frase_8_parole")] == 1
    assert sorted(run.observer.started) == sorted(("m1", e, True, 7) for e in LEVELS)
    assert len(run.observer.done) == 28


def test_restricted_efforts_measure_and_store_only_those(suite: Suite, registry: Registry, tmp_path: Path) -> None:
    run = benchmark(suite, registry, tmp_path / "p.json", perfect, efforts=("xhigh", "low"))

    assert list(run.report.profiles) == ["m1@low", "m1@xhigh"]
    assert list(run.stored["profiles"]) == ["m1@low", "m1@xhigh"]
    assert Counter(body["reasoning_effort"] for body in run.bodies) == {"low": 9, "xhigh": 9}
    assert run.report.recommendations == {"m1": "low"}


@pytest.mark.parametrize(
    ("answerers", "tiers", "recommended"),
    [
        (
            {"none": tool_shy, "low": fooled, "medium": perfect, "xhigh": perfect},
            {"none": "small", "low": "medium", "medium": "large", "xhigh": "large"},
            "medium",
        ),
        (
            {"none": fooled, "low": tool_shy, "medium": fooled, "xhigh": fooled},
            {"none": "medium", "low": "small", "medium": "medium", "xhigh": "medium"},
            "none",
        ),
        (
            {"none": tool_shy, "low": tool_shy, "medium": fooled, "xhigh": perfect},
            {"none": "small", "low": "small", "medium": "medium", "xhigh": "large"},
            "xhigh",
        ),
    ],
)
def test_recommendation_is_the_cheapest_level_at_the_highest_tier(
    suite: Suite,
    registry: Registry,
    tmp_path: Path,
    answerers: dict[str, Answerer],
    tiers: dict[str, str],
    recommended: str,
) -> None:
    run = benchmark(suite, registry, tmp_path / "p.json", by_effort(answerers))

    assert {p["reasoningEffort"]: p["tier"] for p in run.report.profiles.values()} == tiers
    assert run.report.recommendations == {"m1": recommended}
    assert run.stored["recommendations"] == {"m1": recommended}


def test_a_refused_effort_is_measured_once_and_stored_as_none(suite: Suite, registry: Registry, tmp_path: Path) -> None:
    run = benchmark(suite, registry, tmp_path / "p.json", refusing_effort)

    assert run.report.ok
    assert list(run.report.profiles) == ["m1@none"]
    profile = run.report.profiles["m1@none"]
    assert profile["effortApplied"] is False
    assert profile["reasoningEffort"] == "none"
    assert profile["tier"] == "large"
    assert run.stored == {"profiles": {"m1@none": profile}, "recommendations": {"m1": "none"}}
    (swept,) = run.report.sweeps
    assert [(lv.effort, lv.effort_applied) for lv in swept.levels] == [("none", False)]
    (note,) = swept.notes
    assert "m1" in note
    assert "reasoning_effort" in note
    assert "as none" in note
    assert run.observer.notes == [note]
    assert ("m1", "none", False, 7) in run.observer.started
    sent = [body for body in run.bodies if body is not None]  # a request cancelled half-sent arrives without body
    without = [body for body in sent if "reasoning_effort" not in body]
    assert len(without) == 9
    refused = [body for body in sent if "reasoning_effort" in body]
    assert 1 <= len(refused) <= 36
    assert EFFORT_REFUSAL in note


# --- retries and failures -------------------------------------------------------------------------------------------


def test_throttled_requests_are_retried_and_change_nothing(suite: Suite, registry: Registry, tmp_path: Path) -> None:
    clean = benchmark(suite, registry, tmp_path / "clean.json", perfect)
    busy = benchmark(suite, registry, tmp_path / "busy.json", throttled(perfect, every=3))

    assert busy.report.ok
    assert len(busy.bodies) == 48  # 36 answered, and every third distinct request throttled once and retried
    assert comparable(busy.stored["profiles"]) == comparable(clean.stored["profiles"])
    assert busy.stored["recommendations"] == clean.stored["recommendations"] == {"m1": "none"}


def entry_text(text: str, key: str) -> str:
    """The text of one profile entry as it stands in the store file."""
    found = re.search(rf'^    "{re.escape(key)}": \{{\n.*?^    \}}', text, re.MULTILINE | re.DOTALL)
    assert found is not None, key
    return found.group()


def test_a_model_failing_for_good_keeps_its_earlier_profile(suite: Suite, registry: Registry, tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    benchmark(suite, registry, store, perfect, models=("bad",), listed=("bad",), efforts=("none",))
    before = entry_text(store.read_text(encoding="utf-8"), "bad@none")

    answerer = by_model({"good": fooled, "bad": failing(500, "the model crashed")})
    run = benchmark(suite, registry, store, answerer, models=(), listed=("good", "bad"), retries=1)

    assert not run.report.ok
    assert [line.split(" ")[0] for line in run.report.failed] == [f"bad@{e}" for e in LEVELS]
    for line in run.report.failed:
        assert " not stored: " in line
        assert "HTTP 500" in line
        assert "the model crashed" in line
    assert list(run.report.profiles) == [f"good@{e}" for e in LEVELS]
    assert list(run.stored["profiles"]) == ["bad@none", *(f"good@{e}" for e in LEVELS)]
    assert entry_text(store.read_text(encoding="utf-8"), "bad@none") == before
    assert run.stored["recommendations"] == {"bad": "none", "good": "none"}
    assert run.report.recommendations == {"good": "none"}
    assert all(p["tier"] == "medium" for p in run.report.profiles.values())


def test_models_of_one_run_are_measured_apart(suite: Suite, registry: Registry, tmp_path: Path) -> None:
    answerer = by_model({"p": perfect, "f": fooled, "s": tool_shy})
    run = benchmark(suite, registry, tmp_path / "p.json", answerer, models=("all",), listed=("p", "f", "s"))

    assert [s.model for s in run.report.sweeps] == ["p", "f", "s"]
    tiers = {key: profile["tier"] for key, profile in run.stored["profiles"].items()}
    assert tiers == {f"{m}@{e}": t for m, t in (("p", "large"), ("f", "medium"), ("s", "small")) for e in LEVELS}
    assert run.stored["recommendations"] == {"p": "none", "f": "none", "s": "none"}
    assert Counter(body["model"] for body in run.bodies) == {"p": 36, "f": 36, "s": 28}


# --- speed and length -----------------------------------------------------------------------------------------------


def test_avg_completion_tokens_is_the_mean_of_each_tests_mean(suite: Suite, registry: Registry, tmp_path: Path) -> None:
    def answerer(body: dict[str, Any], n: int) -> Reply:
        step = which_test(body)[1]
        return dataclasses.replace(perfect(body, n), usage=(5, 10 * (step + 1)))

    run = benchmark(suite, registry, tmp_path / "p.json", answerer, efforts=("none",))

    profile = run.report.profiles["m1@none"]
    assert profile["avgCompletionTokens"] == 11  # (5 tests x 10 + 2 chains x 15) / 7, not 110 / 9 requests
    assert "usageEstimated" not in profile
    assert isinstance(profile["tokensPerSecond"], int | float)
    assert profile["tokensPerSecond"] > 0


def test_answers_without_usage_are_estimated_and_flagged(suite: Suite, registry: Registry, tmp_path: Path) -> None:
    def answerer(body: dict[str, Any], n: int) -> Reply:
        return dataclasses.replace(perfect(body, n), usage=None)

    run = benchmark(suite, registry, tmp_path / "p.json", answerer, efforts=("none",))

    profile = run.report.profiles["m1@none"]
    assert profile["usageEstimated"] is True
    assert profile["avgCompletionTokens"] > 0


# --- the stored file ------------------------------------------------------------------------------------------------


def integral(value: Any) -> Any:
    """``value`` with every whole float made an int, as JavaScript writes numbers."""
    if isinstance(value, dict):
        return {k: integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [integral(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def test_the_store_keeps_the_reference_layout(suite: Suite, registry: Registry, tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    run = benchmark(suite, registry, store, fooled, models=("qwen-ß",), listed=("qwen-ß",), efforts=("none", "low"))

    text = store.read_text(encoding="utf-8")
    data = json.loads(text)
    assert text == json.dumps(integral(data), indent=2, ensure_ascii=False) + "\n"
    assert text.startswith('{\n  "profiles": {\n    "qwen-ß@none": {\n      "model": "qwen-ß",\n      "provider": ')
    assert re.search(r":\s*-?\d+\.0\s*[,\n]", text) is None
    assert '"instruction": 1,' in text
    assert '"toolCalling": 0.85\n' in text
    assert '"score": 0.63\n' in text
    assert "\\u00df" not in text
    assert list(data) == ["profiles", "recommendations"]
    assert data["recommendations"] == {"qwen-ß": "none"}
    for effort in ("none", "low"):
        profile = data["profiles"][f"qwen-ß@{effort}"]
        assert list(profile) == [
            *SPEC_FIELDS,
            "backend",
            "effortApplied",
            "suite",
            "sampling",
            "speedSource",
            "speedFigures",
            "toolCallsInText",
            "answerFaults",
            "effortEffective",
            "intervals",
            "tierConfidence",
        ]
        assert profile["answerFaults"] == {"wrongArguments": 1}  # the distractor's id passed on
        assert list(profile["scores"]) == ["instruction", "json", "toolCalling"]
        assert profile["provider"] == run.server.base_url
        assert profile["benchmarkVersion"] == 6
        assert profile["testsHash"] == folder_hash(DEFAULT_SUITE) == suite.hash
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", profile["testedAt"])
        assert profile["avgCompletionTokens"] == 7
        assert profile["backend"] == "openai"
        assert profile["effortApplied"] is True
        assert [list(r) for r in profile["testResults"]] == [["name", "category", "score"]] * 7
