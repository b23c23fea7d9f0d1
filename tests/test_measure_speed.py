"""Speed is the model's, not the queue's: the same answers measure alike at -j 1 and -j 4 on a one-slot server."""

from __future__ import annotations

from pathlib import Path

import pytest
from answerers import perfect
from imitations import LlamaCppImitation, measure

from tsuka_core.plugins.registry import Registry
from tsuka_core.suite.model import Suite

RATE = 200.0
"""The imitation's true generation rate, tokens per second."""


@pytest.mark.parametrize("jobs", [1, 4])
def test_tokens_per_second_is_the_servers_generation_rate_at_any_concurrency(
    jobs: int, tmp_path: Path, suite: Suite, registry: Registry
) -> None:
    with LlamaCppImitation(perfect, slots=1, rate=RATE) as server:
        report, notes, profiles = measure(server, tmp_path / "p.json", suite, registry, jobs)

    assert report.ok, report.failed
    profile = profiles["smollm2@none"]
    assert profile["speedSource"] == "server"
    assert abs(profile["tokensPerSecond"] - RATE) <= RATE * 0.1, profile["tokensPerSecond"]
    assert abs(profile["promptTokensPerSecond"] - 2000.0) <= 2000.0 * 0.25
    assert 15 <= profile["timeToFirstTokenMs"] <= 40  # 40 prompt tokens at 2000 per second: 20 ms
    assert profile["server"] == {
        "kind": "llama.cpp",
        "version": "b9999-imitation",
        "modelFile": "/models/imitation-135M.Q4_1.gguf",
        "slots": 1,
        "supportsTools": True,
        "supportsParallelToolCalls": False,
        "supportsReasoningEffort": False,
    }
    said = [n for n in notes.notes if "slot" in n]
    assert bool(said) == (jobs > 1), notes.notes  # -j above the slots gets a note


def test_without_server_timings_the_wall_time_is_used_and_said(
    tmp_path: Path, suite: Suite, registry: Registry
) -> None:
    """The wall time counts the queue: at -j 4 on one slot it is far below the true rate, and the profile says so."""
    with LlamaCppImitation(perfect, slots=1, rate=RATE, timings=False) as server:
        report, _, profiles = measure(server, tmp_path / "p.json", suite, registry, 4)

    assert report.ok, report.failed
    profile = profiles["smollm2@none"]
    assert profile["speedSource"] == "wall"
    assert profile["tokensPerSecond"] < RATE * 0.7
    assert "promptTokensPerSecond" not in profile


def test_the_default_concurrency_is_the_servers_slot_count(tmp_path: Path, suite: Suite, registry: Registry) -> None:
    with LlamaCppImitation(perfect, slots=2, rate=2000.0, tokens=20) as server:
        report, notes, _ = measure(server, tmp_path / "p.json", suite, registry, None)

    assert report.ok, report.failed
    assert any("2 slot(s): 2 request(s) in flight" in n for n in notes.notes), notes.notes


def test_a_model_the_server_does_not_list_is_refused_before_any_request(
    tmp_path: Path, suite: Suite, registry: Registry
) -> None:
    from tsuka_core.errors import UsageError

    with LlamaCppImitation(perfect) as server, pytest.raises(UsageError) as caught:
        measure(server, tmp_path / "p.json", suite, registry, 1, models=("smolm2",))

    assert "did you mean 'smollm2'?" in str(caught.value)
    assert server.chats == 0
    assert not (tmp_path / "p.json").exists()


def test_a_server_that_lists_nothing_is_not_checked(tmp_path: Path, suite: Suite, registry: Registry) -> None:
    with LlamaCppImitation(perfect, models=(), rate=2000.0, tokens=10) as server:
        report, _, profiles = measure(server, tmp_path / "p.json", suite, registry, 1, models=("anything",))

    assert report.ok, report.failed
    assert list(profiles) == ["anything@none"]


def test_reasoning_tokens_are_averaged_apart(tmp_path: Path, suite: Suite, registry: Registry) -> None:
    with LlamaCppImitation(perfect, rate=2000.0, tokens=30, reasoning_tokens=12) as server:
        _, _, profiles = measure(server, tmp_path / "p.json", suite, registry, 1)

    assert profiles["smollm2@none"]["avgReasoningTokens"] == 12
    assert profiles["smollm2@none"]["avgCompletionTokens"] == 30


def test_a_template_without_tools_is_said_before_the_tool_tests(
    tmp_path: Path, suite: Suite, registry: Registry
) -> None:
    with LlamaCppImitation(perfect, rate=2000.0, tokens=10, caps={"supports_tools": False}) as server:
        _, notes, profiles = measure(server, tmp_path / "p.json", suite, registry, 1)

    assert any("does not support tools" in n for n in notes.notes), notes.notes
    assert profiles["smollm2@none"]["toolCallingServerSupport"] is False


def test_a_server_that_ignores_the_effort_is_noted_and_marked(tmp_path: Path, suite: Suite, registry: Registry) -> None:
    from answerers import by_effort, fooled

    store = tmp_path / "p.json"
    efforts_read = {"supports_reasoning_effort": True}  # the template says it reads the effort
    with LlamaCppImitation(perfect, rate=5000.0, tokens=10, caps=efforts_read) as server:
        _, notes, profiles = measure(server, store, suite, registry, 4, efforts=("none", "low"))
    assert any("appears to ignore the effort setting" in n for n in notes.notes), notes.notes
    assert {p["effortEffective"] for p in profiles.values()} == {False}

    differs = by_effort({"none": fooled, "low": perfect})
    with LlamaCppImitation(differs, rate=5000.0, tokens=10, caps=efforts_read) as server:
        _, notes, profiles = measure(server, tmp_path / "q.json", suite, registry, 4, efforts=("none", "low"))
    assert not any("ignore the effort" in n for n in notes.notes)
    assert {p["effortEffective"] for p in profiles.values()} == {True}
