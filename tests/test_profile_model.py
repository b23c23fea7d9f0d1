"""The typed profile: parsed once where the store is read, each field on its own, unknown keys kept."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from tsuka_core.backends.base import ChatResponse
from tsuka_core.judge.answer import ToolCall
from tsuka_core.storage.answer_json import bounded_response_json, response_from_json, response_to_json
from tsuka_core.storage.profile import Profile, StoredTestResult
from tsuka_core.storage.store import BENCHMARK_VERSION, ProfileStore

GOOD: dict[str, Any] = {
    "model": "m",
    "tier": "medium",
    "scores": {"instruction": 1, "json": 0.5, "toolCalling": 0.25},
    "tokensPerSecond": 12,
    "testedAt": "2026-01-02T03:04:05.006Z",
    "benchmarkVersion": BENCHMARK_VERSION,
    "testsHash": "abcd1234",
    "testResults": [{"name": "t", "category": "json", "score": 0.5, "runs": [0, 1]}],
    "reasoningEffort": "none",
    "tierConfidence": 0.9,
    "fromTheOtherTool": {"kept": [1, 2]},
}


def test_a_profile_reads_its_camel_case_fields_typed() -> None:
    profile = Profile.parse(GOOD)
    assert (profile.model, profile.tier, profile.tests_hash) == ("m", "medium", "abcd1234")
    assert profile.tokens_per_second == 12
    assert isinstance(profile.tokens_per_second, int)
    assert profile.test_results == [StoredTestResult.parse(GOOD["testResults"][0])]
    assert profile.test_results[0].run_scores == (0.0, 1.0)
    assert profile.model_extra == {"fromTheOtherTool": {"kept": [1, 2]}}
    assert not profile.damaged
    assert profile.status("abcd1234") == (True, "valid")


def test_a_damaged_field_is_none_and_remembered_the_others_stay() -> None:
    profile = Profile.parse(GOOD | {"tierConfidence": 1.5, "testsHash": 7, "benchmarkVersion": True})
    assert profile.tier_confidence is None
    assert profile.tests_hash is None
    assert profile.benchmark_version is None
    assert profile.damaged == {"tierConfidence": 1.5, "testsHash": 7, "benchmarkVersion": True}
    assert profile.tier == "medium"
    assert profile.model == "m"
    assert profile.status("abcd1234") == (
        False,
        f"stale: benchmarkVersion true, this engine is {BENCHMARK_VERSION}; "
        "suite changed (testsHash 7, suite now abcd1234)",
    )


@pytest.mark.parametrize("entry", [[], "a string", None, 3, {"tier": "huge"}, {"tier": ["small"]}, {}])
def test_an_entry_without_an_object_and_a_tier_is_not_a_profile(entry: object) -> None:
    profile = Profile.parse(entry)
    assert not profile.is_profile
    assert profile.status("abcd1234") == (False, "not a profile")


def test_snake_case_keys_in_the_store_are_unknown_keys_not_fields() -> None:
    profile = Profile.parse({"tier": "small", "tests_hash": "abcd1234"})
    assert profile.tests_hash is None
    assert profile.model_extra == {"tests_hash": "abcd1234"}
    assert Profile(tests_hash="x").tests_hash == "x"  # a program may build one by name


def test_a_bad_test_result_spoils_only_itself() -> None:
    profile = Profile.parse(
        GOOD | {"testResults": [5, {"name": "t", "category": "json", "score": "1"}, GOOD["testResults"][0]]}
    )
    assert profile.test_results is not None
    first, second, third = profile.test_results
    assert not first.is_object
    assert not second.usable
    assert third.usable
    assert second.damaged == {"score": "1"}


def test_the_store_hands_out_profiles_and_writes_unknown_keys_back_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "models_profile.json"
    other = {"model": "x", "tier": "large", "weird": [1.5, None, {"deep": "ü"}], "testsHash": 12}
    text = json.dumps({"profiles": {"x@low": other, "junk@none": [1]}, "extra": 1e-7}, indent=2) + "\n"
    path.write_text(text, encoding="utf-8")
    data = ProfileStore(path).read()
    assert isinstance(data.profiles["x@low"], Profile)
    assert data.profiles["x@low"].damaged == {"testsHash": 12}
    assert not data.profiles["junk@none"].is_profile
    ProfileStore(path).update({"new@none": {"model": "new", "tier": "small"}}, {})
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["profiles"]["x@low"] == other
    assert written["profiles"]["junk@none"] == [1]
    assert list(written["profiles"]) == ["x@low", "junk@none", "new@none"]
    assert '"extra": 1e-7' in path.read_text(encoding="utf-8")


def test_a_rendered_prompt_too_large_for_the_history_keeps_its_start() -> None:
    """An answer over the history's limit is cut: the rendered prompt too, down to its start, never dropped."""
    answer = ChatResponse(text="ok", rendered_prompt="<start>" + "x" * 4000)
    text, cut = bounded_response_json(answer, limit=1000)
    stored = json.loads(text)
    assert cut
    assert stored["renderedPrompt"].startswith("<start>")
    assert len(stored["renderedPrompt"]) < 1000
    assert len(text.encode()) <= 1000


def test_a_stored_answer_round_trips_and_a_changed_one_is_refused_by_name() -> None:
    call = ToolCall("c1", "read", {"path": "a"}, None, {"id": "c1"})
    answer = ChatResponse(
        text="hi", tool_calls=(call,), prompt_tokens=3, completion_tokens=2, generation_ms=5.5, rendered_prompt="<s>"
    )
    stored = response_to_json(answer)
    assert list(stored)[:4] == ["text", "content", "reasoning", "toolCalls"]
    assert (stored["generationMs"], stored["renderedPrompt"]) == (5.5, "<s>")
    assert "promptMs" not in stored
    assert "renderedPrompt" not in response_to_json(dataclasses.replace(answer, rendered_prompt=None))
    assert response_from_json(stored) == answer
    for changed, said in [
        ({"text": None}, "'text' holds NoneType"),
        ({"toolCalls": [{"id": "c1"}]}, "'toolCalls[0].name' is missing"),
        ({"completionTokens": -1}, "'completionTokens' holds int"),
        ({"speedSource": "guess"}, "'speedSource' holds str"),
        ({"duration": True}, "'duration' holds bool"),
        ({"renderedPrompt": 5}, "'renderedPrompt' holds int"),
    ]:
        with pytest.raises(ValueError, match=said.replace("[", r"\[").replace("]", r"\]")):
            response_from_json(stored | changed)
    assert response_from_json(stored | {"promptTokens": -5, "cut": 10}).prompt_tokens is None
