"""The check types that count an answer's tool calls and judge the call at a given position."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

import tsuka_core
from tsuka_core import Answer, Outcome, ToolCall, normalise_tool_call
from tsuka_core.judge.checks import run_check


def call(index: int, name: str, arguments: str) -> ToolCall:
    """A tool call as a server would send it (arguments as a JSON string), normalised."""
    raw = {"id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": arguments}}
    normalised = normalise_tool_call(raw, index)
    assert normalised is not None
    return normalised


BOTH = "(get_weather, get_time)"
TWO_CALLS = (call(0, "get_weather", '{"city": "Paris"}'), call(1, "get_time", '{"city": "Tokyo", "offset": 9}'))


def judge(registry: tsuka_core.Registry, type_name: str, calls: tuple[ToolCall, ...], **params: Any) -> Outcome:
    """Validate ``params`` for ``type_name`` as the suite loader does, and judge an answer making ``calls``."""
    check_type = registry.check_type(type_name)
    assert check_type is not None
    return run_check(check_type(check_type.params_model.model_validate(params)), Answer("", calls))


@pytest.mark.parametrize(
    ("calls", "params", "passed", "detail"),
    [
        (TWO_CALLS, {"value": 2}, True, "2 tool call(s) (get_weather, get_time), expected 2"),
        (TWO_CALLS[:1], {"value": 2}, False, "1 tool call(s) (get_weather), expected 2"),
        (TWO_CALLS, {"value": 1}, False, "2 tool call(s) (get_weather, get_time), expected 1"),
        (TWO_CALLS, {"value": 1, "mode": "at_least"}, True, f"2 tool call(s) {BOTH}, expected at least 1"),
        ((), {"value": 1, "mode": "at_least"}, False, "0 tool call(s) (none), expected at least 1"),
        ((), {"value": 0}, True, "0 tool call(s) (none), expected 0"),
    ],
)
def test_tool_calls_count(
    registry: tsuka_core.Registry, calls: tuple[ToolCall, ...], params: dict[str, Any], passed: bool, detail: str
) -> None:
    assert judge(registry, "tool_calls_count", calls, **params) == Outcome("passed" if passed else "failed", detail)


@pytest.mark.parametrize(
    ("index", "value", "passed", "detail"),
    [
        (0, "get_weather", True, "call 0 is get_weather, expected get_weather"),
        (1, "get_time", True, "call 1 is get_time, expected get_time"),
        (1, "get_weather", False, "call 1 is get_time, expected get_weather"),
        (2, "get_time", False, "no tool call at index 2 (calls: get_weather, get_time)"),
    ],
)
def test_tool_call_at(registry: tsuka_core.Registry, index: int, value: str, passed: bool, detail: str) -> None:
    outcome = judge(registry, "tool_call_at", TWO_CALLS, index=index, value=value)
    assert outcome == Outcome("passed" if passed else "failed", detail)


@pytest.mark.parametrize(
    ("params", "passed", "detail"),
    [
        ({"index": 1, "arg": "city", "value": "Tokyo"}, True, 'call 1 city is "Tokyo", expected "Tokyo"'),
        ({"index": 0, "arg": "city", "value": "Tokyo"}, False, 'call 0 city is "Paris", expected "Tokyo"'),
        ({"index": 1, "arg": "offset", "value": 9}, True, "call 1 offset is 9, expected 9"),
        ({"index": 1, "arg": "offset", "value": "9"}, False, 'call 1 offset is 9, expected "9"'),
        ({"index": 0, "arg": "offset", "value": 9}, False, "get_weather has no argument 'offset'"),
        ({"index": 5, "arg": "city", "value": 1}, False, "no tool call at index 5 (calls: get_weather, get_time)"),
    ],
)
def test_tool_arg_at(registry: tsuka_core.Registry, params: dict[str, Any], passed: bool, detail: str) -> None:
    assert judge(registry, "tool_arg_at", TWO_CALLS, **params) == Outcome("passed" if passed else "failed", detail)


def test_tool_arg_at_fails_on_arguments_that_are_not_an_object(registry: tsuka_core.Registry) -> None:
    broken = (call(0, "get_weather", "[1, 2]"),)
    outcome = judge(registry, "tool_arg_at", broken, index=0, arg="city", value="Paris")
    assert not outcome.passed
    assert outcome.detail.startswith("get_weather: ")


@pytest.mark.parametrize(
    ("type_name", "params"),
    [
        ("tool_calls_count", {"value": -1}),
        ("tool_calls_count", {"value": 2, "mode": "most"}),
        ("tool_call_at", {"index": -1, "value": "x"}),
        ("tool_call_at", {"value": "x"}),
        ("tool_arg_at", {"index": 0, "value": 1}),
    ],
)
def test_bad_params_are_refused(registry: tsuka_core.Registry, type_name: str, params: dict[str, Any]) -> None:
    check_type = registry.check_type(type_name)
    assert check_type is not None
    with pytest.raises(ValidationError):
        check_type.params_model.model_validate(params)
