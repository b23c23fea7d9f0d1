"""Argument semantics as exact as BFCL's checker: accepted values, optional arguments, declared types, normalising."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tsuka_core import Answer, Outcome, ToolCall, normalise_tool_call
from tsuka_core.testing import run_check

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "area",
            "parameters": {
                "type": "object",
                "properties": {
                    "base": {"type": "integer"},
                    "height": {"type": "number"},
                    "unit": {"type": "string", "enum": ["units", "cm"]},
                },
                "required": ["base", "height"],
            },
        },
    }
]
EXPECTED = {"name": "area", "arguments": {"base": 10}, "accept": {"height": [5, 6]}, "optional": ["unit"]}


def made(arguments: str | dict[str, Any], *, cut: bool = False, name: str = "area") -> Answer:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    raw = {"id": "c0", "type": "function", "function": {"name": name, "arguments": text}}
    call = normalise_tool_call(raw, 0)
    assert call is not None
    return Answer("", (call,), TOOLS, cut)


def matches(answer: Answer, **params: Any) -> Outcome:
    return run_check("tool_calls_match", {"calls": [EXPECTED], **params}, answer)


@pytest.mark.parametrize(
    ("arguments", "passed", "why"),
    [
        ({"base": 10, "height": 5}, True, ""),
        ({"base": 10, "height": 6.0}, True, ""),  # a number takes 6.0 as 6
        ({"base": 10, "height": 5, "unit": "units"}, True, ""),  # optional, present
        ({"base": 10.0, "height": 5}, False, "base 10.0: float where the tool declares integer"),
        ({"base": True, "height": 5}, False, "base true: bool where the tool declares integer"),
        ({"base": 10, "height": 7}, False, "has height 7"),
        ({"base": 10}, False, "lacks height"),
        ({"base": 10, "height": 5, "colour": "red"}, False, "colour, an argument the tool does not declare"),
        ({"base": "10", "height": 5}, False, 'base "10": str where the tool declares integer'),
    ],
)
def test_values_types_and_declared_arguments(arguments: dict[str, Any], passed: bool, why: str) -> None:
    outcome = matches(made(arguments))
    assert outcome.passed is passed, outcome.detail
    assert why in outcome.detail


def test_only_named_refuses_an_argument_the_expected_call_does_not_name() -> None:
    expected = {"name": "area", "arguments": {"base": 10, "height": 5}}
    answer = made({"base": 10, "height": 5, "unit": "cm"})
    assert run_check("tool_calls_match", {"calls": [expected]}, answer).passed
    strict = run_check("tool_calls_match", {"calls": [expected], "only_named": True}, answer)
    assert strict == Outcome("failed", 'no call matches area(base=10, height=5): call 0 has unit, not an expected '
                             "argument (calls: area)")  # fmt: skip


def test_strings_are_normalised_only_when_asked() -> None:
    expected = {"name": "area", "arguments": {"base": 10, "height": 5}, "accept": {"unit": ["Units"]}}
    answer = made({"base": 10, "height": 5, "unit": "units"})
    assert not run_check("tool_calls_match", {"calls": [expected]}, answer).passed
    assert run_check("tool_calls_match", {"calls": [expected], "normalize": True}, answer).passed


def test_a_cut_answer_or_repaired_arguments_match_nothing() -> None:
    assert matches(made({"base": 10, "height": 5}, cut=True)).detail == (
        "answer cut at the token limit: its calls are not judged"
    )
    broken = made('{"base": 10, "height": 5')
    assert broken.tool_calls[0].repaired
    assert "not valid JSON as written" in matches(broken).detail


def test_an_argument_in_arguments_and_accept_is_refused() -> None:
    from tsuka_core.errors import SuiteError

    with pytest.raises(SuiteError, match="arguments or in accept, not both"):
        run_check("tool_calls_match", {"calls": [{"name": "a", "arguments": {"x": 1}, "accept": {"x": [1]}}]}, "")


@pytest.mark.parametrize(
    ("arguments", "detail"),
    [
        ({"base": 10, "height": 5}, "1 call(s) conform to their tools' schemas"),
        ({"base": 10.0, "height": 5}, "area: base: 10.0 is not of type integer"),
        ({"height": 5}, "area: 'base' is a required property"),
        ({"base": 1, "height": 2, "unit": "km"}, 'area: unit: "km" is not one of ["units","cm"]'),
        ({"base": 1, "height": 2, "x": 1}, "area: x is not an argument the tool declares"),
        ('{"base": 1, "height": 2', "area: arguments were not valid JSON as written"),
    ],
)
def test_tool_args_conform_holds_each_call_to_its_schema(arguments: Any, detail: str) -> None:
    outcome = run_check("tool_args_conform", {}, made(arguments))
    assert outcome.detail == detail


def test_tool_args_conform_refuses_a_tool_not_offered_and_no_call() -> None:
    assert (
        run_check("tool_args_conform", {}, made({}, name="other")).detail == "other is not a tool the request offered"
    )
    assert run_check("tool_args_conform", {}, Answer("hello", (), TOOLS)).detail == "no tool call"
    lenient = run_check("tool_args_conform", {"undeclared": True}, made({"base": 1, "height": 2, "x": 1}))
    assert lenient.passed  # the schema alone decides, and it does not forbid additional properties


def test_tool_arg_equals_holds_the_declared_type() -> None:
    outcome = run_check("tool_arg_equals", {"arg": "base", "value": 10}, made({"base": 10.0, "height": 5}))
    assert outcome == Outcome("failed", "base is 10.0: float where the tool declares integer")
    assert run_check("tool_arg_equals", {"arg": "height", "value": 5}, made({"base": 1, "height": 5.0})).passed


def test_json_checks_refuse_a_cut_answer_and_as_written_refuses_a_repair() -> None:
    cut = Answer('{"a": 1}', (), (), True)
    assert run_check("json_valid", {}, cut).detail.startswith("answer cut at the token limit")
    assert run_check("json_path_equals", {"path": "a", "value": 1}, cut).detail.startswith("answer cut")
    repaired = Answer('{"a": 1, "b": [2', (), ())
    assert run_check("json_valid", {}, repaired).passed
    assert not run_check("json_valid", {"as_written": True}, repaired).passed
    assert run_check("json_valid", {"as_written": True}, Answer('Here: {"a": 1}')).passed


@pytest.mark.parametrize(
    ("params", "text", "detail"),
    [
        ({"min": 3}, "one two three", "expected at least 3 words, got 3"),
        ({"max": 2}, "one two three", "expected at most 2 words, got 3"),
        ({"min": 1, "max": 2}, "one", "expected 1 to 2 words, got 1"),
        ({"value": 2}, "don't stop", "expected 2 words, got 2"),
        ({"value": 3, "words": "alphanumeric"}, "don't stop", "expected 3 words, got 3"),
    ],
)
def test_word_count_takes_a_range_and_a_word_definition(params: dict[str, Any], text: str, detail: str) -> None:
    assert run_check("word_count", params, text).detail == detail


def test_a_call_made_with_a_tool_call_object_keeps_its_parsed_arguments() -> None:
    call = ToolCall("c0", "area", {"base": 10, "height": 5})
    assert matches(Answer("", (call,), TOOLS)).passed


def test_tool_arg_at_refuses_a_cut_answer_as_every_argument_check_does() -> None:
    answer = made({"base": 10, "height": 5}, cut=True)
    for check, params in (("tool_arg_equals", {}), ("tool_arg_at", {"index": 0})):
        outcome = run_check(check, {"arg": "base", "value": 10, **params}, answer)
        assert outcome.detail.startswith("answer cut at the token limit"), (check, outcome)


LIST_TOOL = [
    {
        "type": "function",
        "function": {
            "name": "plot",
            "parameters": {
                "type": "object",
                "properties": {
                    "points": {"type": "array", "items": {"type": "number"}},
                    "label": {"type": "string"},
                    "style": {"type": "object"},
                },
                "required": ["points"],
            },
        },
    }
]


def plotted(arguments: dict[str, Any], expected: dict[str, Any]) -> bool:
    answer = Answer("", (ToolCall("c0", "plot", arguments),), LIST_TOOL)
    params = {"calls": [{"name": "plot", **expected}], "only_named": True, "normalize": True}
    return run_check("tool_calls_match", params, answer).passed


def test_normalising_applies_where_bfcl_normalises_and_a_variable_is_compared_as_written() -> None:
    expected = {"accept": {"points": [[1.5, 2.5]], "label": ["Net Sales"], "style": [{"color": "Dark Red"}]}}
    assert plotted({"points": [1.5, 2.5], "label": "net-sales", "style": {"color": "dark_red"}}, expected)
    assert not plotted({"points": [1.5, 2.5], "label": "net-sales", "style": {"Color": "dark red"}}, expected)
    variable = {"accept": {"points": ["pointList"]}}
    assert plotted({"points": "pointList"}, variable)  # a variable's name where an array was wanted
    assert not plotted({"points": "pointlist"}, variable)  # compared as written: no normalising for a variable


def test_items_are_held_to_their_type_unless_the_argument_may_be_absent() -> None:
    assert not plotted({"points": [1, 2]}, {"accept": {"points": [[1.0, 2.0]]}})  # ints where floats are wanted
    assert plotted({"points": [1, 2]}, {"accept": {"points": [[1.0, 2.0], []]}, "optional": ["points"]})


def test_bfcls_absent_marker_is_an_empty_string_or_array_when_sent() -> None:
    expected = {"accept": {"points": [[1.0]], "label": ["x", ""]}, "optional": ["label"]}
    assert plotted({"points": [1.0], "label": ""}, expected)
    assert plotted({"points": [1.0]}, expected)
    assert not plotted({"points": [1.0], "label": "y"}, expected)
