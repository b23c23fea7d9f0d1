"""tool_calls_match: the answer's calls as a set, each expected call made by a call of its own, in any order."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

import tsuka_core
from tsuka_core import Answer, Outcome, ToolCall, normalise_tool_call
from tsuka_core.judge.checks import run_check

PARIS = {"name": "get_weather", "arguments": {"city": "Paris"}}
ROME = {"name": "get_weather", "arguments": {"city": "Rome"}}


def call(index: int, name: str, arguments: str) -> ToolCall:
    """A tool call as a server would send it (arguments as a JSON string), normalised."""
    raw = {"id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": arguments}}
    normalised = normalise_tool_call(raw, index)
    assert normalised is not None
    return normalised


def judge(registry: tsuka_core.Registry, made: tuple[ToolCall, ...], **params: Any) -> Outcome:
    check_type = registry.check_type("tool_calls_match")
    assert check_type is not None
    return run_check(check_type(check_type.params_model.model_validate(params)), Answer("", made))


def weather(index: int, city: str, extra: str = "") -> ToolCall:
    return call(index, "get_weather", f'{{"city": "{city}"{extra}}}')


def test_the_calls_match_in_either_order(registry: tsuka_core.Registry) -> None:
    for calls in ((weather(0, "Paris"), weather(1, "Rome")), (weather(0, "Rome"), weather(1, "Paris"))):
        outcome = judge(registry, calls, calls=[PARIS, ROME])
        assert outcome.status == "passed", outcome.detail


def test_other_arguments_may_be_present(registry: tsuka_core.Registry) -> None:
    calls = (weather(0, "Rome", ', "unit": "celsius"'), weather(1, "Paris"))
    assert judge(registry, calls, calls=[PARIS, ROME]).status == "passed"


@pytest.mark.parametrize(
    ("calls", "detail"),
    [
        ((weather(0, "Paris"),), "1 tool call(s) (get_weather), expected 2"),
        (
            (weather(0, "Paris"), weather(1, "Paris")),
            'no call matches get_weather(city="Rome"): call 0 has city "Paris"; call 1 has city "Paris"'
            " (calls: get_weather, get_weather)",
        ),
        (
            (weather(0, "Paris"), weather(1, "Rome"), weather(2, "Oslo")),
            "3 tool call(s) (get_weather, get_weather, get_weather), expected 2",
        ),
        (
            (weather(0, "Paris"), call(1, "get_time", '{"city": "Rome"}')),
            'no call matches get_weather(city="Rome"): call 0 has city "Paris"; call 1 is get_time'
            " (calls: get_weather, get_time)",
        ),
    ],
)
def test_a_missing_duplicated_or_extra_call_fails(
    registry: tsuka_core.Registry, calls: tuple[ToolCall, ...], detail: str
) -> None:
    assert judge(registry, calls, calls=[PARIS, ROME]) == Outcome("failed", detail)


def test_a_malformed_call_matches_nothing(registry: tsuka_core.Registry) -> None:
    """Arguments the model broke (repaired by json-repair) are not credited, even when the repair reads right."""
    broken = call(1, "get_weather", '{"city": "Rome"')
    assert broken.repaired
    outcome = judge(registry, (weather(0, "Paris"), broken), calls=[PARIS, ROME])
    assert outcome == Outcome(
        "failed",
        'no call matches get_weather(city="Rome"): call 0 has city "Paris"; call 1 has arguments that were not valid'
        " JSON as written (calls: get_weather, get_weather)",
    )


def test_not_exact_allows_more_calls(registry: tsuka_core.Registry) -> None:
    calls = (weather(0, "Oslo"), weather(1, "Rome"), weather(2, "Paris"))
    assert judge(registry, calls, calls=[PARIS, ROME], exact=False).status == "passed"


def test_two_equal_entries_need_two_calls(registry: tsuka_core.Registry) -> None:
    outcome = judge(registry, (weather(0, "Paris"), weather(1, "Rome")), calls=[PARIS, PARIS], exact=False)
    assert outcome.status == "failed"


@pytest.mark.parametrize("params", [{"calls": []}, {"calls": [{"arguments": {}}]}, {"calls": [PARIS], "order": 1}])
def test_bad_params_are_refused(registry: tsuka_core.Registry, params: dict[str, Any]) -> None:
    check_type = registry.check_type("tool_calls_match")
    assert check_type is not None
    with pytest.raises(ValidationError):
        check_type.params_model.model_validate(params)
