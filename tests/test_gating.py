"""Tier gating: visible and hidden tools from a model's valid stored profile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gate_helpers import write_store

from tsuka_core import allowed_tools
from tsuka_core.errors import UsageError
from tsuka_core.gating.allowlist import gate_tools, required_tier
from tsuka_core.storage.store import BENCHMARK_VERSION, ProfileStore, StoreData
from tsuka_core.terms import PROFILES_ENV, Tier

HASH = "98ac6763"


def tool(name: str, tier: Any = None, *, inside: bool = False) -> dict[str, Any]:
    """An OpenAI tool schema, with ``requiredTier`` on the tool or inside ``function`` when given."""
    function: dict[str, Any] = {"name": name, "description": name, "parameters": {"type": "object"}}
    schema: dict[str, Any] = {"type": "function", "function": function}
    if tier is not None:
        (function if inside else schema)["requiredTier"] = tier
    return schema


TOOLS = [tool("read_file"), tool("search", "medium", inside=True), tool("write_file", "large")]


def profile(model: str, effort: str, tier: Tier, *, tests_hash: str = HASH, version: int = BENCHMARK_VERSION) -> Any:
    return {
        "model": model,
        "tier": tier,
        "benchmarkVersion": version,
        "testsHash": tests_hash,
        "reasoningEffort": effort,
    }


def store(*profiles: dict[str, Any], recommendations: dict[str, Any] | None = None) -> StoreData:
    by_key = {f"{p['model']}@{p['reasoningEffort']}": p for p in profiles}
    recs = recommendations or {}
    return StoreData.from_raw({"profiles": by_key, "recommendations": recs})


def names(tools: Any) -> list[str]:
    return [t["function"]["name"] for t in tools]


def test_medium_profile_sees_small_and_medium_tools() -> None:
    data = store(profile("model-x", "none", "medium"), recommendations={"model-x": "none"})
    gate = gate_tools(TOOLS, "model-x", data, HASH)
    assert (gate.tier, gate.profiled, gate.effort, gate.effort_source) == ("medium", True, "none", "recommendation")
    assert names(gate.visible) == ["read_file", "search"]
    assert [(h.name, h.required_tier) for h in gate.hidden] == [("write_file", "large")]
    assert gate.hidden[0].reason == "write_file needs tier large; model-x@none is medium"
    assert gate.visible[0] is TOOLS[0]
    assert gate.notes == ()


def test_small_profile_hides_medium_tool() -> None:
    gate = gate_tools(TOOLS, "model-x", store(profile("model-x", "low", "small")), HASH, effort="low")
    assert names(gate.visible) == ["read_file"]
    assert gate.hidden[0].reason == "search needs tier medium; model-x@low is small"
    assert gate.profiled


def test_large_profile_sees_everything() -> None:
    gate = gate_tools(TOOLS, "model-x", store(profile("model-x", "none", "large")), HASH, effort="none")
    assert names(gate.visible) == ["read_file", "search", "write_file"]
    assert gate.hidden == ()


@pytest.mark.parametrize("model", ["gpt-4o", "llama-3-70b-instruct", "qwen3-235b-large"])
def test_unprofiled_model_is_small_and_told_so(model: str) -> None:
    gate = gate_tools(TOOLS, model, store(profile("model-x", "none", "large")), HASH)
    assert (gate.tier, gate.profiled, gate.effort, gate.effort_source) == ("small", False, None, "none")
    assert names(gate.visible) == ["read_file"]
    assert gate.hidden[0].reason == f"search needs tier medium; {model} is unprofiled (treated as small)"
    assert any("unprofiled" in note for note in gate.notes)


def test_stale_profile_is_not_used() -> None:
    data = store(profile("model-x", "none", "large", tests_hash="1a2b3c4d"), recommendations={"model-x": "none"})
    gate = gate_tools(TOOLS, "model-x", data, HASH)
    assert (gate.tier, gate.profiled) == ("small", False)
    assert gate.profile_status == f"stale: suite changed (testsHash 1a2b3c4d, suite now {HASH})"
    assert names(gate.visible) == ["read_file"]
    old = store(profile("model-x", "none", "large", version=4))
    assert not gate_tools(TOOLS, "model-x", old, HASH, effort="none").profiled


def test_explicit_effort_wins_over_recommendation() -> None:
    data = store(
        profile("model-x", "none", "small"),
        profile("model-x", "medium", "large"),
        recommendations={"model-x": "medium"},
    )
    recommended = gate_tools(TOOLS, "model-x", data, HASH)
    assert (recommended.effort, recommended.effort_source, recommended.tier) == ("medium", "recommendation", "large")
    explicit = gate_tools(TOOLS, "model-x", data, HASH, effort="none")
    assert (explicit.effort, explicit.effort_source, explicit.tier) == ("none", "explicit", "small")
    missing = gate_tools(TOOLS, "model-x", data, HASH, effort="low")
    assert (missing.profiled, missing.tier) == (False, "small")
    assert missing.profile_status == "no profile stored for model-x@low"


def test_unknown_effort_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown effort 'max'"):
        gate_tools(TOOLS, "model-x", store(), HASH, effort="max")  # type: ignore[arg-type]


def test_bogus_recommendation_is_no_recommendation() -> None:
    data = store(profile("model-x", "none", "large"), recommendations={"model-x": "turbo"})
    gate = gate_tools(TOOLS, "model-x", data, HASH)
    assert (gate.effort, gate.effort_source, gate.profiled) == (None, "none", False)


def test_unknown_required_tier_counts_as_large() -> None:
    odd = [tool("deploy", "huge"), tool("rm", 3, inside=True)]
    medium = gate_tools(odd, "model-x", store(profile("model-x", "none", "medium")), HASH, effort="none")
    assert names(medium.visible) == []
    assert [h.required_tier for h in medium.hidden] == ["large", "large"]
    assert any('deploy: unknown requiredTier "huge", treated as large' in note for note in medium.notes)
    large = gate_tools(odd, "model-x", store(profile("model-x", "none", "large")), HASH, effort="none")
    assert names(large.visible) == ["deploy", "rm"]


def test_required_tier_defaults_small_and_takes_the_higher_of_two_places() -> None:
    assert required_tier(tool("a")) == ("small", None)
    both = tool("b", "small")
    both["function"]["requiredTier"] = "large"
    assert required_tier(both) == ("large", None)
    assert required_tier({"name": "bare", "requiredTier": "medium"}) == ("medium", None)


def test_reads_a_profile_store_file(tmp_path: Path) -> None:
    path = tmp_path / "models_profile.json"
    ProfileStore(path).update({"model-x@low": profile("model-x", "low", "large")}, {"model-x": "low"})
    gate = gate_tools(TOOLS, "model-x", ProfileStore(path), HASH)
    assert (gate.tier, gate.effort, gate.subject) == ("large", "low", "model-x@low")
    assert names(gate.visible) == ["read_file", "search", "write_file"]


# --- allowed_tools ----------------------------------------------------------------------------------------------------


@pytest.fixture
def store_file(tmp_path: Path) -> Path:
    return write_store(tmp_path / "store.json")


def test_allowed_tools_returns_the_given_objects_of_every_shape(store_file: Path) -> None:
    class Named:
        def __init__(self, name: str) -> None:
            self.name = name

    objects = [Named("read_file"), Named("write_file")]
    tiers = {"read_*": "small", "write_*": "large"}
    assert allowed_tools("m", objects, profiles=store_file, tiers=tiers) == objects[:1]
    assert allowed_tools("m", objects, "xhigh", profiles=store_file, tiers=tiers) == objects
    assert allowed_tools("m", ["read_file", "write_file"], profiles=store_file, tiers=tiers) == ["read_file"]
    assert allowed_tools("m", TOOLS, profiles=store_file) == TOOLS[:2]
    assert allowed_tools("m", TOOLS, "none", profiles=store_file) == TOOLS[:1]


def test_allowed_tools_reads_the_store_the_environment_names(
    store_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(PROFILES_ENV, str(store_file))
    assert allowed_tools("m", ["x"], tiers={"x": "medium"}) == ["x"]
    monkeypatch.delenv(PROFILES_ENV)
    assert allowed_tools("m", ["x"], tiers={"x": "medium"}) == []


def test_allowed_tools_refuses_a_bad_effort_or_tier_map(store_file: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown effort 'max'"):
        allowed_tools("m", ["x"], "max", profiles=store_file)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match='x: tier "huge"'):
        allowed_tools("m", ["x"], profiles=store_file, tiers={"x": "huge"})
    (tmp_path / "t.toml").write_text("x = [", encoding="utf-8")
    with pytest.raises(UsageError, match="cannot read the tier map"):
        allowed_tools("m", ["x"], profiles=store_file, tiers=tmp_path / "t.toml")


# --- tool names -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["read_file\ndelete_all", "", "read\x1b]0;x\x07", "x" * 129, "read file", "réad"])
def test_a_tool_name_no_api_accepts_is_a_usage_error(store_file: Path, bad: str) -> None:
    class Named:
        name = bad

    for tools in ([bad], [{"name": bad}], [tool(bad)], [Named()]):
        with pytest.raises(UsageError) as caught:
            allowed_tools("m", ["read_file", *tools], "xhigh", profiles=store_file, tiers={"read_*": "small"})
        message = str(caught.value)
        assert message.startswith(f"tool #2 has the name {ascii(bad)[:40]}")
        assert message.isprintable()
        assert message.isascii()
    with pytest.raises(UsageError, match="tool #1 has the name"):
        gate_tools([tool(bad)], "model-x", store(profile("model-x", "none", "large")), HASH, effort="none")


def test_a_tool_without_a_name_is_a_usage_error(store_file: Path) -> None:
    with pytest.raises(UsageError, match="tool #1 has no name"):
        allowed_tools("m", [{"type": "function", "function": {}}], profiles=store_file)
    with pytest.raises(UsageError, match=r"tool #1 has a name that is not a string \(int\)"):
        allowed_tools("m", [{"name": 3}], profiles=store_file)
    with pytest.raises(UsageError, match="tool #1 has no name"):
        allowed_tools("m", [object()], profiles=store_file)


def test_a_long_bad_name_is_shown_cut_with_its_length(store_file: Path) -> None:
    with pytest.raises(UsageError) as caught:
        allowed_tools("m", ["\n" * 10_000], profiles=store_file)
    assert "... (10000 characters)" in str(caught.value)
    assert len(str(caught.value)) < 400
