"""The built-in toolcount suite: generated files, answers that pass and gaming that fails, the tolerance and gating."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from gate_helpers import profile
from loopback import LoopbackServer, Reply

from tsuka_core import Answer, Registry
from tsuka_core.backends.base import BackendConfig
from tsuka_core.cli.main import cli
from tsuka_core.engine.results import TestResult as RunResult
from tsuka_core.engine.results import group_runs
from tsuka_core.engine.toolcount import MARGIN, tolerance, toolcount_fields
from tsuka_core.gating.allowlist import allowed_tools
from tsuka_core.judge.answer import ToolCall
from tsuka_core.judge.checks import run_check
from tsuka_core.run.session import RunOptions, run_benchmark
from tsuka_core.suite.loading import load_suite, resolve_suite, suite_hash
from tsuka_core.suite.model import Suite
from tsuka_core.suite.model import Test as SuiteTest

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "tsuka_checks_builtin" / "suites" / "toolcount"
_spec = importlib.util.spec_from_file_location("toolcount_suite", ROOT / "tools" / "toolcount_suite.py")
assert _spec is not None
assert _spec.loader is not None
generator = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generator)
RIGHT = {prompt: (tool, arg, value) for _name, prompt, tool, arg, value in generator.TASKS}
"""Per prompt, the right tool, its argument and the value."""

pytestmark = pytest.mark.usefixtures("fast_retries")


@pytest.fixture(scope="module")
def toolcount(registry: Registry) -> Suite:
    """The suite as registered (installed): a level measured with it is stored as the toolcount suite's."""
    return load_suite(resolve_suite("toolcount", registry), registry)


def names(test: SuiteTest) -> list[str]:
    return [t["function"]["name"] for t in test.tools]


def reference(test: SuiteTest) -> Answer:
    tool, arg, value = RIGHT[str(test.steps[0].prompt)]
    return Answer("", (ToolCall(id="c0", name=tool, arguments={arg: value}),))


def first_tool(test: SuiteTest) -> Answer:
    """Gaming: always call the first tool offered, with the task's value as its argument."""
    _tool, _arg, value = RIGHT[str(test.steps[0].prompt)]
    first = test.tools[0]["function"]
    return Answer("", (ToolCall(id="c0", name=first["name"], arguments={first["parameters"]["required"][0]: value}),))


def passes(test: SuiteTest, answer: Answer) -> bool:
    return all(run_check(check.impl, answer).passed for check in test.steps[0].checks)


def test_the_committed_files_are_the_generators_output() -> None:
    committed = {p.name: p.read_text(encoding="utf-8") for p in FOLDER.glob("*.json")}
    assert committed == generator.files()


def test_the_suite_is_registered(registry: Registry) -> None:
    assert suite_hash(registry.suites["toolcount"].path) == suite_hash(FOLDER)  # the committed files, installed


def test_each_task_is_offered_with_every_count_among_similar_tools(toolcount: Suite) -> None:
    by_prompt: dict[str, list[int]] = {}
    for test in toolcount.tests:
        by_prompt.setdefault(str(test.steps[0].prompt), []).append(len(test.tools))
        tool = RIGHT[str(test.steps[0].prompt)][0]
        assert tool in names(test)
        assert len(set(names(test))) == len(test.tools)
        assert len(test.tools) == 1 or names(test)[0] != tool, test.name
        if len(test.tools) >= 8:  # the nearest distractors share the record: get_invoice beside update_invoice
            assert sum(n.endswith(tool.split("_", 1)[1]) for n in names(test)) >= 7
    assert {p: sorted(c) for p, c in by_prompt.items()} == {p: [1, 4, 8, 16, 32, 64] for p in RIGHT}


def test_reference_answers_pass_and_gaming_fails(toolcount: Suite) -> None:
    assert all(passes(t, reference(t)) for t in toolcount.tests)
    assert not any(passes(t, Answer("I would call get_invoice.", ())) for t in toolcount.tests)
    assert [t.name for t in toolcount.tests if passes(t, first_tool(t))] == [
        t.name for t in toolcount.tests if len(t.tools) == 1
    ]


def test_the_tolerance_is_the_last_count_within_the_margin_of_one_tool() -> None:
    assert tolerance({1: 1.0, 4: 1.0, 8: 0.95, 16: 0.8, 32: 1.0}) == 8  # 16 falls out; 32 does not count after it
    assert tolerance({1: 0.5, 4: 0.5 - MARGIN, 8: 0.2}) == 4
    assert tolerance({4: 1.0, 8: 1.0}) is None


class Quiet:
    """A sweep observer that keeps nothing."""

    def level_started(self, model: str, effort: str, applied: bool, total: int) -> None:
        del model, effort, applied, total

    def test_done(self, model: str, effort: str, result: RunResult) -> None:
        del model, effort, result

    def note(self, message: str) -> None:
        del message


def by_tools(limit: int) -> Any:
    """Answer right while at most ``limit`` tools are offered, else call the first tool."""

    def answer(body: dict[str, Any], n: int) -> Reply:
        del n
        tools = body["tools"]
        prompt = body["messages"][-1]["content"]
        tool, arg, value = RIGHT[prompt]
        if len(tools) > limit:
            first = tools[0]["function"]
            return Reply.tool_call(first["name"], {first["parameters"]["required"][0]: value})
        return Reply.tool_call(tool, {arg: value})

    return answer


@pytest.mark.parametrize(("limit", "expected"), [(64, 64), (8, 8), (1, 1)])
def test_a_level_records_its_tool_count_tolerance(
    toolcount: Suite, registry: Registry, tmp_path: Path, limit: int, expected: int
) -> None:
    store = tmp_path / "p.json"
    with LoopbackServer(by_tools(limit), models=("m1",)) as server:
        config = BackendConfig(base_url=server.base_url, retries=0, timeout=10)
        run = RunOptions(models=("m1",), config=config, efforts=("none",), store_path=store)
        report = asyncio.run(run_benchmark(run, toolcount, registry, Quiet()))

    assert report.ok
    data = json.loads(store.read_text(encoding="utf-8"))
    assert data["profiles"] == {}, "a toolcount run never replaces the default suite's profile"
    stored = data["suiteProfiles"]["toolcount"]["m1@none"]
    assert stored["toolCountTolerance"] == expected
    scores = stored["toolCountScores"]
    assert list(scores) == ["1", "4", "8", "16", "32", "64"]
    assert all(scores[str(n)] == 1 for n in (1, 4, 8, 16, 32, 64) if n <= limit)
    assert all(scores[str(n)] < 1 - MARGIN for n in (4, 8, 16, 32, 64) if n > limit)  # a wrong tool earns little


def test_the_default_suite_records_no_tolerance(suite: Suite) -> None:
    assert toolcount_fields(group_runs([RunResult(t, "ok", 1.0) for t in suite.tests])) == {}


TWENTY = [
    {"type": "function", "function": {"name": f"tool_{i:02d}", "parameters": {"type": "object"}}}
    | ({"requiredTier": "medium"} if i < 4 else {})
    for i in range(20)
]


COUNTS = {"1": 1, "4": 1, "8": 1, "16": 1, "32": 1, "64": 1}
"""toolCountScores as the toolcount suite writes them beside a tolerance (which is held to their largest count)."""


def store_with(path: Path, **extra: Any) -> Path:
    measured = extra | ({"toolCountScores": COUNTS} if "toolCountTolerance" in extra else {})
    data = {"profiles": {"m@none": profile("m", "none", "large") | measured}, "recommendations": {"m": "none"}}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def invoke(*args: str | os.PathLike[str]) -> Result:
    env: dict[str, str | None] = {"TSUKA_PROFILES": None}
    return CliRunner(env=env).invoke(cli, [str(a) for a in args], catch_exceptions=False, prog_name="tsuka")


def test_gate_offers_at_most_the_tolerance_lowest_tier_first(tmp_path: Path) -> None:
    store = store_with(tmp_path / "p.json", toolCountTolerance=8)
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TWENTY), encoding="utf-8")

    shown = invoke("gate", "m", "--tools", tools, "--profiles", store, "--json", "--explain")

    assert shown.exit_code == 0, shown.output
    kept = [t["function"]["name"] for t in json.loads(shown.stdout)]
    assert kept == [f"tool_{i:02d}" for i in range(4, 12)]  # small ones first, in file order; medium ones left out
    assert "m@none keeps at most 8 tools (its toolCountTolerance)" in shown.stderr
    assert "drop tool_00: needs medium (requiredTier field); m@none is large" in shown.stderr
    assert "over the tool-count tolerance (m@none keeps at most 8 tools)" in shown.stderr
    assert [t["function"]["name"] for t in allowed_tools("m", TWENTY, profiles=store)] == kept


def test_gate_takes_the_tolerance_from_the_toolcount_suites_profile(tmp_path: Path) -> None:
    """The tier comes from the default suite's profile, the tolerance from the same level measured with toolcount."""
    measured = profile("m", "none", "small") | {"suite": "toolcount", "toolCountTolerance": 8}
    measured["toolCountScores"] = COUNTS
    measured["testsHash"] = suite_hash(resolve_suite("toolcount"))
    data = {
        "profiles": {"m@none": profile("m", "none", "large")},
        "recommendations": {"m": "none"},
        "suiteProfiles": {"toolcount": {"m@none": measured}},
        "suiteRecommendations": {"toolcount": {"m": "none"}},
    }
    store = tmp_path / "p.json"
    store.write_text(json.dumps(data), encoding="utf-8")
    kept = [t["function"]["name"] for t in allowed_tools("m", TWENTY, profiles=store)]
    assert kept == [f"tool_{i:02d}" for i in range(4, 12)]  # the lowest required tier first, then file order
    measured["testsHash"] = "00000000"  # measured with toolcount tests that have changed since: the safe side
    store.write_text(json.dumps(data), encoding="utf-8")
    assert [t["function"]["name"] for t in allowed_tools("m", TWENTY, profiles=store)] == ["tool_04"]


def test_without_a_tolerance_nothing_changes_and_a_damaged_one_caps_at_one_tool(tmp_path: Path) -> None:
    store = store_with(tmp_path / "p.json")
    assert allowed_tools("m", TWENTY, profiles=store) == TWENTY
    store = store_with(tmp_path / "p.json", toolCountTolerance=64)
    assert allowed_tools("m", TWENTY, profiles=store) == TWENTY
    for damaged in ("8", 0, True):
        store = store_with(tmp_path / "p.json", toolCountTolerance=damaged)
        assert [t["function"]["name"] for t in allowed_tools("m", TWENTY, profiles=store)] == ["tool_04"]


def test_the_report_draws_the_tool_score_against_the_tool_count(tmp_path: Path) -> None:
    store, history, page = tmp_path / "p.json", tmp_path / "h.sqlite", tmp_path / "r.html"
    with LoopbackServer(by_tools(8), models=("m1",)) as server:
        ran = invoke(
            "run", "m1", "--suite", "toolcount", "-e", "none", "--base-url", server.base_url,
            "--profiles", store, "--history-db", history,
        )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    assert "tool-count tolerance: 8 tools (tool score by count: 1 100%, 4 100%, 8 100%, 16 " in ran.output

    made = invoke("report", "last", "--history-db", history, "--profiles", store, "-o", page)

    assert made.exit_code == 0, made.output
    html = page.read_text(encoding="utf-8")
    chart = html[html.index("Accuracy against tool count") :]
    chart = chart[: chart.index("</figure>")]
    assert [f">{n}<" in chart for n in (1, 4, 8, 16, 32, 64)] == [True] * 6
    assert chart.count(">100%<") >= 3  # 1, 4 and 8 tools
