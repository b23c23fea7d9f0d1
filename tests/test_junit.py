"""CI outputs of tsuka run: the JUnit file (failures and errors apart), --json-file and --min-tier."""

from __future__ import annotations

import json
import threading
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from answerers import by_model, failing, fooled, perfect, tool_shy
from history_helpers import DEFAULT_SUITE, invoke, stored
from loopback import LoopbackServer, Reply

from tsuka_core.suite.loading import load_suite

pytestmark = pytest.mark.usefixtures("fast_retries")

MODELS = {"good": perfect, "fooled": fooled, "down": failing(500, "the model crashed")}


@pytest.fixture(scope="module")
def junit(tmp_path_factory: pytest.TempPathFactory) -> tuple[ET.Element, Any]:
    folder = tmp_path_factory.mktemp("junit")
    report = folder / "junit.xml"
    with LoopbackServer(by_model(MODELS), models=list(MODELS)) as server:
        result = invoke(
            "run", "all", "--base-url", server.base_url, "--profiles", folder / "p.json", "-e", "none", "-e", "low",
            "--retries", "0", "--junit", report,
        )  # fmt: skip
    return ET.parse(report).getroot(), result


def cases(root: ET.Element, suite: str) -> dict[str, ET.Element]:
    (found,) = [s for s in root.iter("testsuite") if s.get("name") == suite]
    return {c.get("name", ""): c for c in found.iter("testcase")}


def test_one_case_per_model_effort_and_test(junit: tuple[ET.Element, Any]) -> None:
    root, result = junit
    assert result.exit_code == 1  # "down" could not be measured

    suites = [s.get("name") for s in root.iter("testsuite")]
    assert sorted(suites) == sorted(f"{m}@{e}" for m in MODELS for e in ("none", "low"))
    assert root.get("tests") == str(6 * 7)
    for suite in root.iter("testsuite"):
        assert len(list(suite.iter("testcase"))) == 7
        assert {c.get("classname") for c in suite.iter("testcase")} == {suite.get("name")}


def test_wrong_answers_are_failures(junit: tuple[ET.Element, Any]) -> None:
    root, _ = junit
    fooled_cases = cases(root, "fooled@none")
    chain = fooled_cases["catena_tool_distrattori"]
    (failure,) = chain.findall("failure")
    assert chain.find("error") is None
    assert failure.get("message") == "score 0.63: 1 of 4 check(s) failed"
    assert "steps[1].checks[1] tool_arg_equals (failed)" in (failure.text or "")
    assert "CUS-3318" in (chain.findtext("system-out") or "")
    assert all(not list(c) for name, c in fooled_cases.items() if name != "catena_tool_distrattori")
    assert all(not list(c) for c in cases(root, "good@low").values())


def test_transport_problems_are_errors(junit: tuple[ET.Element, Any]) -> None:
    root, _ = junit
    for case in cases(root, "down@none").values():
        (error,) = case.findall("error")
        assert case.find("failure") is None
        assert error.get("type") == "RequestError"
        assert "HTTP 500" in (error.get("message") or "")


def test_totals_count_failures_and_errors_apart(junit: tuple[ET.Element, Any]) -> None:
    root, _ = junit
    assert (root.get("failures"), root.get("errors")) == ("2", "14")
    fooled_suite = next(s for s in root.iter("testsuite") if s.get("name") == "fooled@low")
    assert (fooled_suite.get("failures"), fooled_suite.get("errors"), fooled_suite.get("tests")) == ("1", "0", "7")
    properties = {p.get("name"): p.get("value") for p in fooled_suite.iter("property")}
    assert properties["tier"] == "medium"
    assert properties["score.toolCalling"] == "0.85"


def test_model_output_cannot_break_the_xml(tmp_path: Path) -> None:
    nasty = "\x00\x1b[31m</failure>]]><x/>&amp; é\x7f\x0c"

    def answer(body: dict[str, Any], n: int) -> Reply:
        del body, n
        return Reply.text(nasty)

    report = tmp_path / "junit.xml"
    with LoopbackServer(answer, models=["m1"]) as server:
        invoke("run", "m1", "--base-url", server.base_url, "--profiles", tmp_path / "p.json", "-e", "none",
               "--junit", report)  # fmt: skip

    root = ET.parse(report).getroot()
    outputs = [c.findtext("system-out") or "" for c in root.iter("testcase")]
    assert any("\\x00\\x1b[31m</failure>]]><x/>&amp;" in text for text in outputs)


def test_with_repeats_each_run_is_a_case_and_a_flaky_test_shows_which_failed(tmp_path: Path) -> None:
    asked: Counter[str] = Counter()
    lock = threading.Lock()

    def right_then_wrong(body: dict[str, Any], n: int) -> Reply:
        """Right the first time a conversation is asked, an empty answer the second: one run of each test fails."""
        with lock:
            asked[repr(body["messages"])] += 1
            first = asked[repr(body["messages"])] == 1
        return perfect(body, n) if first else Reply.text("")

    report = tmp_path / "junit.xml"
    with LoopbackServer(right_then_wrong, models=["m1"]) as server:
        result = invoke("run", "m1", "--base-url", server.base_url, "--profiles", tmp_path / "p.json", "-e", "none",
                        "--repeats", "2", "--junit", report)  # fmt: skip

    assert result.exit_code == 0, result.stderr
    root = ET.parse(report).getroot()
    found = cases(root, "m1@none")
    names = [test.name for test in load_suite(DEFAULT_SUITE).tests]
    assert list(found) == [f"{name} (run {k} of 2)" for name in names for k in (1, 2)]
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("14", "7", "0")
    for name in names:
        runs = [found[f"{name} (run {k} of 2)"] for k in (1, 2)]
        assert sorted(len(case.findall("failure")) for case in runs) == [0, 1], name
    properties = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert properties["repeats"] == "2"


def test_a_single_run_has_no_run_in_its_names_and_no_repeats_property(junit: tuple[ET.Element, Any]) -> None:
    root, _ = junit
    assert not any("(run " in (case.get("name") or "") for case in root.iter("testcase"))
    assert "repeats" not in {p.get("name") for p in root.iter("property")}


def test_json_file_holds_what_json_prints(tmp_path: Path) -> None:
    store, out = tmp_path / "p.json", tmp_path / "run.json"
    with LoopbackServer(perfect, models=["m1"]) as server:
        printed = invoke("run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none", "--json")
        written = invoke(
            "run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none", "--json-file", out
        )

    assert printed.exit_code == written.exit_code == 0
    first, second = json.loads(printed.stdout), json.loads(out.read_text(encoding="utf-8"))
    assert second["profiles"] == stored(store)["profiles"]
    assert second["levels"] == first["levels"]
    assert "Recommendation:" in written.stdout


@pytest.mark.parametrize(
    ("minimum", "models", "below"),
    [
        ("large", ["good"], ""),
        ("medium", ["good", "shy"], "shy@none is small, below the minimum tier medium"),
        ("small", ["good", "shy"], ""),
        ("medium", ["fooled"], ""),
        ("large", ["fooled", "good"], "fooled@none is medium, below the minimum tier large"),
    ],
)
def test_min_tier_gates_on_the_recommended_effort(tmp_path: Path, minimum: str, models: list[str], below: str) -> None:
    answers = by_model({"good": perfect, "shy": tool_shy, "fooled": fooled})
    with LoopbackServer(answers, models=["good", "shy", "fooled"]) as server:
        result = invoke(
            "run", *models, "--base-url", server.base_url, "--profiles", tmp_path / "p.json", "-e", "none",
            "--min-tier", minimum,
        )  # fmt: skip

    assert result.exit_code == (3 if below else 0), result.stderr
    said = [line for line in result.stderr.splitlines() if "below --min-tier" in line]
    assert said == ([f"tsuka: below --min-tier: {below}"] if below else [])


def test_a_failed_run_exits_1_before_the_tier_gate(tmp_path: Path) -> None:
    with LoopbackServer(by_model(MODELS), models=list(MODELS)) as server:
        result = invoke(
            "run", "down", "--base-url", server.base_url, "--profiles", tmp_path / "p.json", "-e", "none",
            "--retries", "0", "--min-tier", "small", "--junit", tmp_path / "j.xml",
        )  # fmt: skip

    assert result.exit_code == 1
    assert ET.parse(tmp_path / "j.xml").getroot().get("errors") == "7"
