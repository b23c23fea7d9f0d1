"""Multi-turn tests: the format, the turn loop, the tool environment in its worker, and the turn checks."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import counter_env
import pytest
from counter_env import tool

from tsuka_core import ChatResponse, Registry, SuiteError, normalise_tool_call
from tsuka_core.backends.base import ChatRequest
from tsuka_core.engine import envhost
from tsuka_core.testing import ScriptedBackend, registry_of, tool_call
from tsuka_core.testing.scripted import _one_test

ADD = tool("add", {"amount": {"type": "integer"}})


@pytest.fixture(scope="module")
def registry() -> Registry:
    """The built-in check types and the counter environment."""
    return registry_of(counter_env)


def _test(turns: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"name": "count", "category": "toolCalling", "environment": {"type": "counter", "config": {"start": 1}},
            "tools": [ADD, tool("read")], "turns": turns, **extra}  # fmt: skip


def _write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "01_count.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _run(tmp_path: Path, registry: Registry, data: dict[str, Any], answers: Any) -> tuple[Any, ScriptedBackend]:
    from tsuka_core.engine.runner import run_test

    test = _one_test(_write(tmp_path, data), registry)
    backend = ScriptedBackend(answers)
    return asyncio.run(run_test(backend, test, "m", None)), backend


def _outcomes(result: Any) -> list[tuple[int, str, str]]:
    return [(s.index, c.type, c.outcome.status) for s in result.steps for c in s.checks]


TWO_TURNS = [
    {"prompt": "Add 2.", "reference": [{"name": "add", "arguments": {"amount": 2}}],
     "checks": [{"type": "tool_calls_count", "value": 1, "mode": "at_least"}, {"type": "state_matches"}]},
    {"prompt": "What is it now?", "reference": [{"name": "read"}],
     "checks": [{"type": "results_include"}, {"type": "contains", "value": "3"}]},
]  # fmt: skip


def test_each_call_runs_and_its_result_goes_back(tmp_path: Path, registry: Registry) -> None:
    answers = [tool_call("add", {"amount": 2}), "Added.", tool_call("read", {}), "It is 3."]
    result, backend = _run(tmp_path, registry, _test(TWO_TURNS), answers)
    assert result.status == "ok", result.error
    assert all(status == "passed" for *_, status in _outcomes(result)), _outcomes(result)
    second = backend.requests[1].messages
    assert second[-1] == {"role": "tool", "tool_call_id": "call_0", "content": '{"value": 3}'}
    assert second[-2]["tool_calls"][0]["function"]["name"] == "add"
    last = backend.requests[3].messages
    assert [m["role"] for m in last] == ["user", "assistant", "tool", "assistant", "user", "assistant", "tool"]
    assert last[-1]["content"] == "3"


def test_the_state_and_results_are_compared_with_the_reference(tmp_path: Path, registry: Registry) -> None:
    answers = [tool_call("add", {"amount": 5}), "Added.", "It is 6, I think."]  # never reads
    result, _ = _run(tmp_path, registry, _test(TWO_TURNS), answers)
    outcomes = {
        (i, t): (s, d)
        for i, t, s, d in [
            (st.index, c.type, c.outcome.status, c.outcome.detail) for st in result.steps for c in st.checks
        ]
    }
    assert outcomes[(0, "state_matches")][0] == "failed"
    assert '"model": 6' in outcomes[(0, "state_matches")][1]
    assert '"reference": 3' in outcomes[(0, "state_matches")][1]
    assert outcomes[(1, "results_include")] == ("failed", '1 of the reference results not obtained: ["3"]')
    assert result.score == pytest.approx(1 / 4)  # turn 0 called; nothing else holds


def test_a_result_obtained_in_an_earlier_turn_counts(tmp_path: Path, registry: Registry) -> None:
    answers = [tool_call("add", {"amount": 2}), tool_call("read", {}), "3 now.", "Still 3."]
    result, _ = _run(tmp_path, registry, _test(TWO_TURNS), answers)
    assert all(status == "passed" for *_, status in _outcomes(result)), _outcomes(result)


def test_a_step_whose_arguments_do_not_parse_ends_the_turn_unexecuted(tmp_path: Path, registry: Registry) -> None:
    raw = {"id": "call_0", "type": "function", "function": {"name": "add", "arguments": '{"amount": '}}
    broken = ChatResponse("", (normalise_tool_call(raw, 0),))  # type: ignore[arg-type]
    answers = [broken, tool_call("read", {}), "1."]
    result, backend = _run(tmp_path, registry, _test(TWO_TURNS), answers)
    assert len(backend.requests) == 3  # turn 0 ended at once; turn 1 read and answered
    assert _outcomes(result)[:2] == [(0, "tool_calls_count", "failed"), (0, "state_matches", "failed")]
    assert backend.requests[1].messages[-1] == {"role": "user", "content": "What is it now?"}


def test_revealed_tools_are_offered_from_their_turn_on(tmp_path: Path, registry: Registry) -> None:
    turns = [{"prompt": "Add 1."}, {"prompt": "Now read it.", "reveal": [tool("read")]}, {"prompt": "Again."}]
    data = _test(turns) | {"tools": [ADD]}
    _, backend = _run(tmp_path, registry, data, ["ok", "ok", "ok"])
    names = [[t["function"]["name"] for t in r.tools] for r in backend.requests]
    assert names == [["add"], ["add", "read"], ["add", "read"]]


def test_more_than_twenty_steps_in_a_turn_stop_the_test(tmp_path: Path, registry: Registry) -> None:
    def always(request: ChatRequest) -> ChatResponse:
        return tool_call("add", {"amount": 1})

    result, backend = _run(tmp_path, registry, _test(TWO_TURNS), always)
    assert len(backend.requests) == 21
    assert [s.sent for s in result.steps] == [True, False]
    first = result.steps[0].checks[0].outcome.detail
    assert "more than 20 steps with calls in turn 0" in first


def test_a_call_that_hangs_ends_its_test_not_the_run(
    tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(envhost, "CALL_SECONDS", 1.0)
    data = _test([{"prompt": "Hang.", "checks": [{"type": "not_empty"}]}, {"prompt": "Then?"}]) | {
        "tools": [tool("hang")]
    }
    result, _ = _run(tmp_path, registry, data, [tool_call("hang", {}), "never asked"])
    detail = result.steps[0].checks[0].outcome.detail
    assert "ended its tool environment: counter: calling hang took longer than 1 s" in detail
    assert [s.sent for s in result.steps] == [True, False]


def test_the_environment_runs_in_a_worker_and_its_printing_goes_nowhere(tmp_path: Path, registry: Registry) -> None:
    data = _test([{"prompt": "Which process?"}]) | {"tools": [tool("pid"), tool("noisy")]}
    answers = [ChatResponse("", (*tool_call("pid", {}).tool_calls, *tool_call("noisy", {}, call_id="c1").tool_calls)),
               "done"]  # fmt: skip
    _, backend = _run(tmp_path, registry, data, answers)
    results = [m["content"] for m in backend.requests[1].messages if m["role"] == "tool"]
    assert int(results[0]) != os.getpid()
    assert results[1] == "quiet"


def test_an_unknown_tool_gets_the_error_as_its_result(tmp_path: Path, registry: Registry) -> None:
    _, backend = _run(tmp_path, registry, _test([{"prompt": "Fly."}]), [tool_call("fly", {}), "no"])
    assert backend.requests[1].messages[-1]["content"] == "Error during execution: no tool 'fly'"


def test_an_environment_that_cannot_be_built_is_an_error_naming_it(tmp_path: Path, registry: Registry) -> None:
    data = _test(TWO_TURNS) | {"environment": {"type": "counter", "config": {"broken": True}}}
    result, backend = _run(tmp_path, registry, data, ["never"])
    assert result.status == "error"
    assert "could not be built: counter: building the environment: RuntimeError: this counter is broken" in (
        result.error or ""
    )
    assert backend.requests == []


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"environment": None}, "environment: required with 'turns'"),
        ({"environment": {"type": "countr"}}, "unknown tool environment 'countr'; did you mean 'counter'?"),
        ({"environment": {"type": "counter", "config": {"begin": 1}}},
         "environment.config.begin: unknown key for tool environment 'counter'"),
        ({"environment": {"type": "counter", "config": {"start": "one"}}}, "environment.config.start:"),
        ({"turns": [{"prompt": "x", "reference": [{"arguments": {}}]}]}, r"turns[0].reference[0].name: required"),
        ({"turns": []}, "turns: required"),
        ({"prompt": "x", "checks": [{"type": "not_empty"}]}, "has both 'prompt'/'checks' and 'turns'"),
    ],
)  # fmt: skip
def test_a_malformed_multi_turn_test_is_refused_naming_the_field(
    tmp_path: Path, registry: Registry, change: dict[str, Any], said: str
) -> None:
    data = _test(TWO_TURNS) | change
    data = {k: v for k, v in data.items() if v is not None}
    with pytest.raises(SuiteError, match=_escaped(said)):
        _one_test(_write(tmp_path, data), registry)


def _escaped(text: str) -> str:
    import re

    return re.escape(text).replace(r"\:", ":")


def test_environment_without_turns_is_refused(tmp_path: Path, registry: Registry) -> None:
    data = {"name": "t", "category": "toolCalling", "prompt": "x", "checks": [{"type": "not_empty"}],
            "environment": {"type": "counter"}}  # fmt: skip
    with pytest.raises(SuiteError, match="turns: required with 'environment'"):
        _one_test(_write(tmp_path, data), registry)


def test_turn_checks_without_a_reference_fail_saying_so(tmp_path: Path, registry: Registry) -> None:
    turns = [{"prompt": "Add.", "checks": [{"type": "state_matches"}, {"type": "results_include"}]}]
    result, _ = _run(tmp_path, registry, _test(turns), [tool_call("add", {}), "ok"])
    details = {c.outcome.detail for c in result.steps[0].checks}
    assert details == {"no reference to compare with: the test states no reference calls for this turn"}


def test_a_worker_serves_the_next_test_with_environments_built_anew(tmp_path: Path, registry: Registry) -> None:
    data = _test([{"prompt": "Go."}]) | {"tools": [ADD, tool("read"), tool("pid")]}
    first = [tool_call("add", {"amount": 5}), tool_call("pid", {}), "done"]
    _, one = _run(tmp_path, registry, data, first)
    _, two = _run(tmp_path, registry, data, [tool_call("read", {}), tool_call("pid", {}), "done"])
    results = [[m["content"] for m in b.requests[-1].messages if m["role"] == "tool"] for b in (one, two)]
    assert results[0][0] == '{"value": 6}'
    assert results[1][0] == "1"  # the second test's counter starts from its own configuration
    assert results[0][1] == results[1][1]  # in the same worker


def test_a_worker_ended_for_a_hang_is_never_served_again(
    tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(envhost, "CALL_SECONDS", 1.0)
    data = _test([{"prompt": "Go."}]) | {"tools": [tool("hang"), tool("pid")]}
    _, before = _run(tmp_path, registry, data, [tool_call("pid", {}), "done"])
    _run(tmp_path, registry, data, [tool_call("hang", {}), "never"])
    _, after = _run(tmp_path, registry, data, [tool_call("pid", {}), "done"])
    pids = [b.requests[-1].messages[-1]["content"] for b in (before, after)]
    assert all(p.isdigit() for p in pids)
    ended = envhost._IDLE
    assert all(process.poll() is None for process in ended)
