"""The tool-count cap fails closed: damaged, stale or mismatched tolerances narrow the tools, and say so."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from gate_helpers import profile

from tsuka_core import TsukaError
from tsuka_core.cli.main import cli
from tsuka_core.gating.allowlist import allowed_tools
from tsuka_core.gating.toolcap import SAFE_TOOL_COUNT, tolerance_value
from tsuka_core.suite.loading import resolve_suite, suite_hash

TEN = [{"type": "function", "function": {"name": f"tool_{i}", "parameters": {"type": "object"}}} for i in range(10)]
LARGE_ONLY = [{**tool, "requiredTier": "large"} for tool in TEN]


COUNTS = {"1": 1, "4": 1, "8": 1, "16": 1, "32": 1, "64": 1}
"""toolCountScores as the toolcount suite measures them: the counts 1 to 64."""


def toolcount_profile(effort: str = "none", tolerance: Any = 1, *, stale: bool = False) -> dict[str, Any]:
    measured = profile("m", effort, "small") | {"suite": "toolcount", "toolCountTolerance": tolerance}
    measured["toolCountScores"] = COUNTS
    measured["testsHash"] = "00000000" if stale else suite_hash(resolve_suite("toolcount"))
    return measured


def write(path: Path, tier_profiles: dict[str, Any] | None, toolcount: dict[str, Any] | None) -> Path:
    data: dict[str, Any] = {
        "profiles": tier_profiles if tier_profiles is not None else {},
        "recommendations": {"m": "none"} if tier_profiles else {},
    }
    if toolcount is not None:
        data["suiteProfiles"] = {"toolcount": toolcount}
        data["suiteRecommendations"] = {"toolcount": {"m": "none"}}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def gate(store: Path, *args: str, tools: Path) -> Result:
    runner = CliRunner(env={"TSUKA_PROFILES": None})
    return runner.invoke(
        cli, ["gate", "m", "--tools", str(tools), "--profiles", str(store), "--json", *args], prog_name="tsuka"
    )


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TEN), encoding="utf-8")
    return path


def kept(result: Result) -> list[str]:
    assert result.exit_code == 0, result.output
    return [t["function"]["name"] for t in json.loads(result.stdout)]


LARGE = {"m@none": profile("m", "none", "large")}


@pytest.mark.parametrize(
    ("tier_profiles", "why"),
    [
        (None, "missing"),
        ({"m@none": profile("m", "none", "large", stale=True)}, "stale"),
        ({"m@none": ["not", "a", "profile"]}, "damaged"),
        ({"m@none": profile("m", "none", "large") | {"tier": "huge"}}, "damaged tier"),
    ],
)
def test_a_valid_toolcount_measurement_caps_whatever_the_tier_profile(
    tmp_path: Path, tools: Path, tier_profiles: dict[str, Any] | None, why: str
) -> None:
    store = write(tmp_path / "p.json", tier_profiles, {"m@none": toolcount_profile(tolerance=1)})
    shown = gate(store, "-e", "none", tools=tools)
    assert kept(shown) == ["tool_0"], why
    assert allowed_tools("m", TEN, effort="none", profiles=store) == TEN[:1]


@pytest.mark.parametrize("damaged", [0, -1, "1", True, None, 2.5, [1], {"n": 1}])
def test_a_damaged_tolerance_caps_at_the_safe_side_and_says_so(tmp_path: Path, tools: Path, damaged: object) -> None:
    store = write(tmp_path / "p.json", LARGE, {"m@none": toolcount_profile(tolerance=damaged)})
    shown = gate(store, "--explain", tools=tools)
    assert kept(shown) == ["tool_0"]
    assert "the safe side" in shown.stderr
    assert f"toolCountTolerance {json.dumps(damaged)}" in shown.stderr
    assert f"tool-count cap: {SAFE_TOOL_COUNT} (the safe side" in shown.stderr
    assert allowed_tools("m", TEN, profiles=store) == TEN[:1]


def test_a_tolerance_in_the_tier_profile_is_judged_the_same_way(tmp_path: Path, tools: Path) -> None:
    for value, expected in ((3, 3), (3.0, 3), ("3", 1), (0, 1)):
        measured = {"toolCountTolerance": value, "toolCountScores": COUNTS}
        store = write(tmp_path / "p.json", {"m@none": profile("m", "none", "large") | measured}, None)
        assert len(kept(gate(store, tools=tools))) == expected, value


def test_a_toolcount_profile_without_its_tolerance_caps_at_the_safe_side(tmp_path: Path, tools: Path) -> None:
    measured = toolcount_profile()
    del measured["toolCountTolerance"]
    store = write(tmp_path / "p.json", LARGE, {"m@none": measured})
    shown = gate(store, tools=tools)
    assert kept(shown) == ["tool_0"]
    assert "toolCountTolerance missing" in shown.stderr


def test_a_whole_number_float_is_read_as_the_number(tmp_path: Path, tools: Path) -> None:
    assert tolerance_value(1.0) == 1
    assert tolerance_value(8.0) == 8
    assert tolerance_value(float("inf")) is None
    assert tolerance_value(float("nan")) is None
    store = write(tmp_path / "p.json", LARGE, {"m@none": toolcount_profile(tolerance=1.0)})
    assert kept(gate(store, tools=tools)) == ["tool_0"]
    store = write(tmp_path / "p.json", LARGE, {"m@none": toolcount_profile(tolerance=4.0)})
    shown = gate(store, tools=tools)
    assert kept(shown) == [f"tool_{i}" for i in range(4)]
    assert "m@none keeps at most 4 tools (its toolCountTolerance)" in shown.stderr
    assert "safe side" not in shown.stderr


def test_a_stale_toolcount_profile_caps_at_the_safe_side(tmp_path: Path, tools: Path) -> None:
    store = write(tmp_path / "p.json", LARGE, {"m@none": toolcount_profile(tolerance=8, stale=True)})
    shown = gate(store, "--explain", tools=tools)
    assert kept(shown) == ["tool_0"]
    assert "toolcount profile m@none is stale" in shown.stderr


def test_a_tolerance_measured_at_another_effort_caps_at_the_safe_side(tmp_path: Path, tools: Path) -> None:
    tier = {"m@none": profile("m", "none", "large"), "m@low": profile("m", "low", "large")}
    store = write(tmp_path / "p.json", tier, {"m@none": toolcount_profile("none", 8)})
    assert len(kept(gate(store, "-e", "none", tools=tools))) == 8
    shown = gate(store, "-e", "low", tools=tools)
    assert kept(shown) == ["tool_0"]
    assert "measured with the toolcount suite at none only; m@low was asked" in shown.stderr
    assert allowed_tools("m", TEN, effort="low", profiles=store) == TEN[:1]


def test_no_effort_anywhere_with_a_measured_tolerance_caps_at_the_safe_side(tmp_path: Path, tools: Path) -> None:
    store = write(tmp_path / "p.json", None, {"m@none": toolcount_profile("none", 8)})
    data = json.loads(store.read_text(encoding="utf-8"))
    data["suiteRecommendations"] = {}
    store.write_text(json.dumps(data), encoding="utf-8")
    shown = gate(store, tools=tools)
    assert kept(shown) == ["tool_0"]
    assert "no effort was given or recommended" in shown.stderr


def test_the_smallest_cap_holds(tmp_path: Path, tools: Path) -> None:
    tier = {"m@none": profile("m", "none", "large") | {"toolCountTolerance": 5, "toolCountScores": COUNTS}}
    store = write(tmp_path / "p.json", tier, {"m@none": toolcount_profile("none", 3)})
    assert len(kept(gate(store, tools=tools))) == 3


def test_a_gate_with_another_tier_suite_still_reads_the_toolcount_suite(tmp_path: Path, tools: Path) -> None:
    """The tier from the extended suite's profile; the cap from the toolcount suite's, as for the default suite."""
    extended = profile("m", "none", "large") | {"suite": "extended"}
    extended["testsHash"] = suite_hash(resolve_suite("extended"))
    data = {
        "profiles": {},
        "recommendations": {},
        "suiteProfiles": {"extended": {"m@none": extended}, "toolcount": {"m@none": toolcount_profile("none", 2)}},
        "suiteRecommendations": {"extended": {"m": "none"}, "toolcount": {"m": "none"}},
    }
    store = tmp_path / "p.json"
    store.write_text(json.dumps(data), encoding="utf-8")
    assert kept(gate(store, "--suite", "extended", tools=tools)) == ["tool_0", "tool_1"]
    assert allowed_tools("m", TEN, profiles=store, suite=resolve_suite("extended")) == TEN[:2]


def test_allowed_tools_resolves_the_store_as_the_commands_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tools: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    write(home / "p.json", LARGE, {"m@none": toolcount_profile(tolerance=2)})
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TSUKA_PROFILES", "~/p.json")
    assert allowed_tools("m", TEN) == TEN[:2]
    assert allowed_tools("m", TEN, profiles="~/p.json") == TEN[:2]
    runner = CliRunner(env={"TSUKA_PROFILES": "~/p.json", "HOME": str(home)})
    assert kept(runner.invoke(cli, ["gate", "m", "--tools", str(tools), "--json"])) == ["tool_0", "tool_1"]
    # An empty TSUKA_PROFILES is the default store here, for both.
    monkeypatch.setenv("TSUKA_PROFILES", "")
    write(tmp_path / "models_profile.json", LARGE, {"m@none": toolcount_profile(tolerance=3)})
    assert allowed_tools("m", TEN) == TEN[:3]
    runner = CliRunner(env={"TSUKA_PROFILES": ""})
    assert len(kept(runner.invoke(cli, ["gate", "m", "--tools", str(tools), "--json"]))) == 3
    assert os.environ["TSUKA_PROFILES"] == ""


def test_an_opt_in_floor_offers_a_model_below_it_no_tool_at_all(tmp_path: Path, tools: Path) -> None:
    store = write(tmp_path / "p.json", {"m@none": profile("m", "none", "small")}, None)
    assert len(kept(gate(store, tools=tools))) == 10  # the contract's default: small tools for a small model
    shown = gate(store, "--floor", "medium", "--explain", tools=tools)
    assert kept(shown) == []
    assert "m@none is small, below the floor medium: it is offered no tool at all" in shown.stderr
    assert "drop tool_0: needs medium (the floor medium)" in shown.stderr
    assert allowed_tools("m", TEN, profiles=store, floor="medium") == []
    assert allowed_tools("m", TEN, profiles=store, floor="small") == TEN
    assert allowed_tools("nobody", TEN, profiles=store, floor="medium") == []  # unprofiled counts as small
    with pytest.raises(TsukaError, match="unknown floor 'huge'"):
        allowed_tools("m", TEN, profiles=store, floor="huge")


def test_a_misspelt_model_gets_a_did_you_mean_in_tier_and_gate(tmp_path: Path, tools: Path) -> None:
    name = "SmolLM2-135M-Instruct.Q4_1"
    store = write(tmp_path / "p.json", {f"{name}@none": profile(name, "none", "small")}, None)
    runner = CliRunner(env={"TSUKA_PROFILES": None})
    for args in (["tier", "smollm2"], ["gate", "smollm2", "--tools", str(tools)]):
        said = runner.invoke(cli, [*args, "--profiles", str(store)], prog_name="tsuka")
        assert said.exit_code == 0
        assert f"did you mean '{name}'?" in said.stderr


@pytest.mark.parametrize("said", ["M", "m\u200b", "mx", None])
def test_the_cap_is_read_from_the_key_whatever_the_model_field_says(tmp_path: Path, tools: Path, said: Any) -> None:
    measured = toolcount_profile(tolerance=2) | {"model": said}
    store = write(tmp_path / "p.json", LARGE, {"m@none": measured})
    assert kept(gate(store, tools=tools)) == ["tool_0", "tool_1"]
    assert allowed_tools("m", TEN, profiles=store) == TEN[:2]


def test_a_profile_whose_effort_contradicts_its_key_caps_at_the_safe_side(tmp_path: Path, tools: Path) -> None:
    measured = toolcount_profile(tolerance=8) | {"reasoningEffort": "xhigh"}
    store = write(tmp_path / "p.json", LARGE, {"m@none": measured})
    shown = gate(store, tools=tools)
    assert kept(shown) == ["tool_0"]
    assert 'stored under "m@none" but its reasoningEffort says "xhigh"' in shown.stderr


def test_a_tier_profile_whose_effort_contradicts_its_key_is_not_used(tmp_path: Path, tools: Path) -> None:
    large_only = tmp_path / "large.json"
    large_only.write_text(json.dumps(LARGE_ONLY), encoding="utf-8")
    store = write(tmp_path / "p.json", {"m@none": profile("m", "none", "large")}, None)
    assert len(kept(gate(store, tools=large_only))) == 10
    store = write(tmp_path / "p.json", {"m@none": profile("m", "xhigh", "large")}, None)
    shown = gate(store, "--explain", tools=large_only)
    assert kept(shown) == []
    assert "mislabelled" in shown.stderr


@pytest.mark.parametrize(("scores", "expected"), [(COUNTS, 64), ({"1": 1, "4": 1, "8": 1}, 8), ({"1": 1}, 1)])
def test_a_tolerance_is_held_to_the_largest_count_measured(
    tmp_path: Path, tools: Path, scores: dict[str, float], expected: int
) -> None:
    hundred = [{"type": "function", "function": {"name": f"t{i}", "parameters": {}}} for i in range(100)]
    many = tmp_path / "many.json"
    many.write_text(json.dumps(hundred), encoding="utf-8")
    measured = toolcount_profile(tolerance=1000) | {"toolCountScores": scores}
    store = write(tmp_path / "p.json", LARGE, {"m@none": measured})
    shown = gate(store, tools=many)
    assert len(kept(shown)) == expected
    assert f"more than the {expected} tools it measured" in shown.stderr


@pytest.mark.parametrize("scores", [None, "damaged", {}, {"x": 1}])
def test_a_tolerance_without_the_counts_it_was_measured_at_caps_at_the_safe_side(
    tmp_path: Path, tools: Path, scores: Any
) -> None:
    measured = toolcount_profile(tolerance=8)
    if scores is None:
        del measured["toolCountScores"]
    else:
        measured["toolCountScores"] = scores
    store = write(tmp_path / "p.json", LARGE, {"m@none": measured})
    shown = gate(store, tools=tools)
    assert kept(shown) == ["tool_0"]
    assert "without the toolCountScores it was measured from" in shown.stderr


@pytest.mark.parametrize("offered", [3, 4, 5])
def test_the_cap_holds_at_its_boundary_one_tool_over_is_one_hidden(tmp_path: Path, offered: int) -> None:
    """A tolerance of 4: four tools pass whole, five lose exactly one (the comparison is ``> limit``, not later)."""
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TEN[:offered]), encoding="utf-8")
    store = write(tmp_path / "p.json", LARGE, {"m@none": toolcount_profile(tolerance=4)})
    assert kept(gate(store, tools=path)) == [f"tool_{i}" for i in range(min(offered, 4))]
    assert allowed_tools("m", TEN[:offered], profiles=store) == TEN[: min(offered, 4)]
    notes = _gated(store, TEN[:offered]).notes
    assert notes == (("m@none keeps at most 4 tools (its toolCountTolerance): 1 hidden in all",) if offered > 4 else ())


def _gated(store: Path, tools: list[dict[str, Any]], floor: str | None = None) -> Any:
    from tsuka_core.gating.allowlist import gate_tools
    from tsuka_core.storage.store import ProfileStore
    from tsuka_core.suite.identity import SuiteHashes

    return gate_tools(tools, "m", ProfileStore(store), SuiteHashes(), floor=floor)  # type: ignore[arg-type]


def test_tools_over_the_tolerance_are_hidden_lowest_tier_kept_first_each_with_its_reason(tmp_path: Path) -> None:
    """Tolerance 2 over a large model: the two tools needing the lowest tier stay (then in order); each one dropped
    is hidden saying it is over the tolerance, and its decision says so (what --explain prints)."""
    tiers = ["large", "small", "medium", "small", "large"]
    offered = [{**tool, "requiredTier": tier} for tool, tier in zip(TEN, tiers, strict=False)]
    store = write(tmp_path / "p.json", LARGE, {"m@none": toolcount_profile(tolerance=2)})
    result = _gated(store, offered)
    assert [t["function"]["name"] for t in result.visible] == ["tool_1", "tool_3"]
    assert [(h.name, h.required_tier) for h in result.hidden] == [("tool_0", "large"), ("tool_2", "medium"),
                                                                  ("tool_4", "large")]  # fmt: skip
    assert all(h.reason == f"{h.name} is over m@none's tool-count tolerance of 2" for h in result.hidden)
    assert result.notes == ("m@none keeps at most 2 tools (its toolCountTolerance): 3 hidden in all",)
    assert [(d.name, d.visible, d.over_tolerance) for d in result.decisions] == [
        ("tool_0", False, True), ("tool_1", True, False), ("tool_2", False, True), ("tool_3", True, False),
        ("tool_4", False, True),
    ]  # fmt: skip
    shown = gate(store, "--explain", tools=_written(tmp_path, offered))
    assert "drop tool_0: needs large (requiredTier field)" in shown.stderr
    assert "over the tool-count tolerance (m@none keeps at most 2 tools)" in shown.stderr
    assert "keep tool_1: needs small" in shown.stderr


def test_a_model_at_its_floor_is_judged_tool_by_tool_not_as_below_it(tmp_path: Path) -> None:
    """The floor hides every tool only below it: a medium model at floor medium loses a large tool for its tier."""
    offered = [{**TEN[0], "requiredTier": "medium"}, {**TEN[1], "requiredTier": "large"}]
    store = write(tmp_path / "p.json", {"m@none": profile("m", "none", "medium")}, None)
    result = _gated(store, offered, floor="medium")
    assert [t["function"]["name"] for t in result.visible] == ["tool_0"]
    (hidden,) = result.hidden
    assert hidden.reason == "tool_1 needs tier large; m@none is medium"
    assert not any("below the floor" in note for note in result.notes)
    below = _gated(store, offered, floor="large")
    assert [(h.name, h.required_tier, h.reason) for h in below.hidden] == [
        ("tool_0", "large", "tool_0: m@none is below the floor large (medium)"),
        ("tool_1", "large", "tool_1: m@none is below the floor large (medium)"),
    ]


def _written(folder: Path, tools: list[dict[str, Any]]) -> Path:
    path = folder / "offered.json"
    path.write_text(json.dumps(tools), encoding="utf-8")
    return path


def test_a_model_whose_name_holds_an_at_sign_is_capped_by_its_own_toolcount_profile(tmp_path: Path) -> None:
    """``org/m@v2@none``: the model is everything before the last ``@`` (a cap read for another name fails open)."""
    name = "org/m@v2"
    measured = toolcount_profile(tolerance=1) | {"model": name}
    store = tmp_path / "p.json"
    store.write_text(json.dumps({"profiles": {f"{name}@none": profile(name, "none", "large")},
                                 "recommendations": {name: "none"},
                                 "suiteProfiles": {"toolcount": {f"{name}@none": measured}},
                                 "suiteRecommendations": {"toolcount": {name: "none"}}}), encoding="utf-8")  # fmt: skip
    assert allowed_tools(name, TEN, profiles=store) == TEN[:1]
    shown = CliRunner(env={"TSUKA_PROFILES": None}).invoke(
        cli, ["gate", name, "--tools", str(_written(tmp_path, TEN)), "--profiles", str(store), "--explain"]
    )
    assert "tool-count cap: 1 (its toolCountTolerance" in shown.stderr, shown.stderr
