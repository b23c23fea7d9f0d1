"""The extra check types: what they register, what a suite may say, and how each judges an answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tsuka_checks_extra import plugin
from tsuka_checks_extra.counts import ToolCallCount, WordCountRange
from tsuka_checks_extra.schema import JsonSchema, ToolArgsSchema

import tsuka_core
from tsuka_core import Answer, CheckType, Outcome, Registry, SuiteError, normalise_tool_call
from tsuka_core.testing import judge as judge_check
from tsuka_core.testing import registry_of, run_check

NAMES = ["json_schema", "tool_args_schema", "tool_call_count", "word_count_range"]
PRODUCT = {
    "type": "object",
    "required": ["name", "price"],
    "properties": {"name": {"type": "string"}, "price": {"type": "number", "minimum": 0}},
}
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "units": {"type": "string", "enum": ["c", "f"]}},
            "required": ["city"],
        },
    },
}
CLOSED = {
    "type": "function",
    "function": {
        "name": "set_port",
        "parameters": {"type": "object", "properties": {"port": {"type": "integer"}}, "additionalProperties": False},
    },
}
PING = {"type": "function", "function": {"name": "ping", "description": "No parameters."}}
BROKEN = {"type": "function", "function": {"name": "broken", "parameters": {"type": "objekt"}}}
TOOLS = (WEATHER, CLOSED, PING, BROKEN)


# docs:start test-registry
@pytest.fixture(scope="module")
def registry() -> Registry:
    """A registry holding this plugin only, built the way tsuka builds it: no globals, no entry points."""
    return registry_of(plugin, builtins=False)


def test_a_suite_with_a_bad_schema_does_not_load(registry: Registry, tmp_path: Path) -> None:
    check = {"type": "json_schema", "value": {"type": "strin"}}
    test = {"name": "t", "category": "json", "prompt": "Answer in JSON.", "checks": [check]}
    (tmp_path / "01_t.json").write_text(json.dumps(test), encoding="utf-8")
    with pytest.raises(SuiteError, match=r"01_t.json: checks\[0\]: not a valid JSON Schema: at type"):
        tsuka_core.load_suite(tmp_path, registry)


def test_a_call_of_a_tool_that_was_not_offered_fails() -> None:
    call = normalise_tool_call({"function": {"name": "get_time", "arguments": "{}"}}, 0)
    assert call is not None
    outcome = run_check(ToolArgsSchema, {}, Answer("", (call,), tools=[WEATHER]))
    assert outcome == Outcome.fail("called get_time, which the test does not offer (offered: get_weather)")


# docs:end test-registry


def make(check_type: type[CheckType[Any]], **params: Any) -> CheckType[Any]:
    return check_type(check_type.params_model.model_validate(params))


def judge(check_type: type[CheckType[Any]], answer: Answer, **params: Any) -> Outcome:
    return judge_check(make(check_type, **params), answer)


def calls(*made: tuple[str, Any]) -> tuple[tsuka_core.ToolCall, ...]:
    found = (
        normalise_tool_call({"function": {"name": name, "arguments": args}}, i) for i, (name, args) in enumerate(made)
    )
    return tuple(call for call in found if call is not None)


def tool_answer(*made: tuple[str, Any]) -> Answer:
    return Answer("", calls(*made), TOOLS)


# --- registration and loading -----------------------------------------------------------------------------------------


def test_the_plugin_registers_five_check_types(registry: Registry) -> None:
    assert sorted(registry.check_types) == NAMES
    assert {entry.distribution for entry in registry.check_types.values()} == {"tsuka-checks-extra"}
    assert registry.backends == {}


@pytest.mark.parametrize("name", NAMES)
def test_each_type_has_a_one_line_description_and_a_valid_example(registry: Registry, name: str) -> None:
    check_type = registry.check_types[name].cls
    assert (check_type.__doc__ or "").startswith("Pass when")
    example = {k: v for k, v in check_type.example.items() if k != "weight"}  # type: ignore[attr-defined]
    check_type.params_model.model_validate(example)


def write_suite(folder: Path, checks: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> Path:
    folder.mkdir()
    test = {"name": "t", "category": "json", "prompt": "Answer.", "checks": checks, "tools": tools or []}
    (folder / "01_t.json").write_text(json.dumps(test), encoding="utf-8")
    return folder


def test_a_suite_using_every_type_loads(registry: Registry, tmp_path: Path) -> None:
    checks = [{"type": name, **make_example(registry, name)} for name in NAMES]
    suite = tsuka_core.load_suite(write_suite(tmp_path / "s", checks, [WEATHER]), registry)
    assert [c.type for c in suite.tests[0].steps[0].checks] == NAMES


def make_example(registry: Registry, name: str) -> dict[str, Any]:
    return dict(registry.check_types[name].cls.example)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("check", "problem"),
    [
        ({"type": "json_schema", "value": {"type": "strin"}}, "checks[0]: not a valid JSON Schema: at type: 'strin'"),
        (
            {"type": "json_schema", "value": {"properties": {"a": {"minimum": "0"}}}},
            "not a valid JSON Schema: at properties.a.minimum: '0' is not of type 'number'",
        ),
        ({"type": "json_schema"}, "checks[0].value: required by check type 'json_schema'"),
        ({"type": "json_schema", "value": "{}"}, "checks[0].value: Input should be a valid dictionary"),
        ({"type": "word_count_range"}, "checks[0]: needs min, max or both"),
        ({"type": "word_count_range", "min": 9, "max": 3}, "checks[0]: min (9) is greater than max (3)"),
        ({"type": "word_count_range", "value": 3}, "checks[0].value: unknown key for check type 'word_count_range'"),
        ({"type": "tool_call_count"}, "checks[0]: needs value, min or max"),
        ({"type": "tool_call_count", "value": 2, "max": 3}, "checks[0]: give either value or min/max, not both"),
        ({"type": "tool_call_count", "value": -1}, "checks[0].value: Input should be greater than or equal to 0"),
        ({"type": "tool_call_count", "min": 1.5}, "checks[0].min: Input should be a valid integer"),
        ({"type": "tool_args_schema", "calls": "some"}, "checks[0].calls: Input should be 'first' or 'all'"),
        ({"type": "tool_args_schema", "strict": "yes"}, "checks[0].strict: Input should be a valid boolean"),
    ],
)
def test_bad_parameters_are_load_errors_with_a_location(
    registry: Registry, tmp_path: Path, check: dict[str, Any], problem: str
) -> None:
    with pytest.raises(SuiteError) as caught:
        tsuka_core.load_suite(write_suite(tmp_path / "s", [check]), registry)
    assert len(caught.value.problems) == 1
    assert problem in caught.value.problems[0]
    assert caught.value.problems[0].startswith("01_t.json: checks[0]")


# --- json_schema ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "status", "detail"),
    [
        ('{"name": "pen", "price": 1.5}', "passed", "strict JSON matches the schema"),
        ('Here:\n```json\n{"name": "pen", "price": 0}\n```', "passed", "fenced JSON matches the schema"),
        ('{"name": "pen", "price": -1}', "failed", "at price: -1 is less than the minimum of 0"),
        ('{"name": "pen"}', "failed", "'price' is a required property"),
        ('{"name": 5, "price": "x"}', "failed", "(and 1 more)"),
        ("[1, 2]", "failed", "[1, 2] is not of type 'object'"),
        ("I cannot answer that.", "failed", "no JSON in the answer"),
    ],
)
def test_json_schema_judges_the_answers_json(text: str, status: str, detail: str) -> None:
    outcome = judge(JsonSchema, Answer(text), value=PRODUCT)
    assert outcome.status == status
    assert detail in outcome.detail


def test_json_schema_asserts_formats() -> None:
    schema = {"type": "object", "properties": {"day": {"type": "string", "format": "date"}}}
    assert judge(JsonSchema, Answer('{"day": "2024-02-29"}'), value=schema).passed
    assert (
        judge(JsonSchema, Answer('{"day": "2024-02-30"}'), value=schema).detail
        == "at day: '2024-02-30' is not a 'date'"
    )


def test_json_schema_honours_an_older_draft() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "number",
        "maximum": 3,
        "exclusiveMaximum": True,
    }
    assert judge(JsonSchema, Answer("2"), value=schema).passed
    assert not judge(JsonSchema, Answer("3"), value=schema).passed


def test_a_long_error_is_cut_to_one_short_line() -> None:
    outcome = judge(JsonSchema, Answer(json.dumps(["word"] * 500)), value={"type": "object"})
    assert outcome.status == "failed"
    assert len(outcome.detail) <= 170
    assert "\n" not in outcome.detail


# --- tool_args_schema -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("made", "status", "detail"),
    [
        (("get_weather", {"city": "Rome"}), "passed", "get_weather(city) matches its schema"),
        (("get_weather", {"city": "Rome", "units": "c"}), "passed", "get_weather(city, units) matches its schema"),
        (("get_weather", {"city": "Rome", "country": "IT"}), "failed", "get_weather: invented argument 'country'"),
        (("get_weather", {"units": "c"}), "failed", "get_weather: missing required argument 'city'"),
        (("get_weather", {"city": 5}), "failed", "get_weather: argument city: 5 is not of type 'string'"),
        (("get_weather", {"city": "R", "units": "k"}), "failed", "argument units: 'k' is not one of ['c', 'f']"),
        (("set_port", {"port": 80, "host": "x"}), "failed", "set_port: invented argument 'host'"),
        (("ping", {}), "passed", "ping() matches its schema"),
        (("ping", {"verbose": True}), "failed", "ping: invented argument 'verbose'"),
        (("get_time", {}), "failed", "called get_time, which the test does not offer (offered: get_weather"),
        (("get_weather", "not json at all"), "failed", "get_weather: tool arguments are not JSON"),
        (("get_weather", "[1, 2]"), "failed", "get_weather: tool arguments are not a JSON object"),
        (("broken", {}), "errored", "the parameters of tool broken are not a valid JSON Schema: at type"),
    ],
)
def test_tool_args_schema_catches_hallucinated_arguments(made: tuple[str, Any], status: str, detail: str) -> None:
    outcome = judge(ToolArgsSchema, tool_answer(made))
    assert outcome.status == status
    assert detail in outcome.detail


def test_several_problems_are_listed_and_counted() -> None:
    arguments = {"city": 5, "units": "k", "a": 1, "b": 2, "x": 3}
    outcome = judge(ToolArgsSchema, tool_answer(("get_weather", arguments)))
    assert outcome.detail == (
        "get_weather: invented arguments 'a', 'b', 'x'; argument city: 5 is not of type 'string'; "
        "argument units: 'k' is not one of ['c', 'f']"
    )
    outcome = judge(ToolArgsSchema, tool_answer(("get_weather", {"units": "k", "a": 1})))
    assert outcome.detail.count(";") == 2


def test_without_strict_undeclared_arguments_follow_the_schema() -> None:
    assert judge(ToolArgsSchema, tool_answer(("get_weather", {"city": "Rome", "country": "IT"})), strict=False).passed
    outcome = judge(ToolArgsSchema, tool_answer(("set_port", {"port": 1, "host": "x"})), strict=False)
    assert outcome.detail == "set_port: invented argument 'host'"


def test_pattern_properties_declare_arguments() -> None:
    tool = {
        "type": "function",
        "function": {"name": "tag", "parameters": {"type": "object", "patternProperties": {"^x-": {"type": "string"}}}},
    }
    answer = Answer("", calls(("tag", {"x-team": "a", "colour": "b"})), (tool,))
    assert judge(ToolArgsSchema, answer).detail == "tag: invented argument 'colour'"


def test_only_the_first_call_is_judged_unless_all_calls_are_asked_for() -> None:
    answer = tool_answer(("get_weather", {"city": "Rome"}), ("get_weather", {"town": "Oslo"}))
    assert judge(ToolArgsSchema, answer).passed
    outcome = judge(ToolArgsSchema, answer, calls="all")
    assert outcome.status == "failed"
    assert outcome.detail.startswith("call 2 get_weather: ")
    assert "invented argument 'town'" in outcome.detail


def test_no_tool_call_fails() -> None:
    assert judge(ToolArgsSchema, Answer("It is sunny.", (), TOOLS)) == Outcome.fail("no tool call")


# --- word_count_range, tool_call_count -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "words", "status", "detail"),
    [
        ({"min": 3, "max": 5}, 3, "passed", "3 words, expected 3 to 5"),
        ({"min": 3, "max": 5}, 5, "passed", "5 words, expected 3 to 5"),
        ({"min": 3, "max": 5}, 6, "failed", "6 words, expected 3 to 5"),
        ({"min": 3}, 2, "failed", "2 words, expected at least 3"),
        ({"max": 3}, 0, "passed", "0 words, expected at most 3"),
    ],
)
def test_word_count_range(params: dict[str, int], words: int, status: str, detail: str) -> None:
    assert judge(WordCountRange, Answer(" ".join(["w"] * words)), **params) == Outcome(status, detail)  # type: ignore[arg-type]


def test_tool_call_count_counts_parallel_calls() -> None:
    two = tool_answer(("get_weather", {"city": "Rome"}), ("get_weather", {"city": "Oslo"}))
    assert judge(ToolCallCount, two, value=2) == Outcome.ok("2 tool calls (get_weather, get_weather), expected 2")
    assert judge(ToolCallCount, two, max=1) == Outcome.fail(
        "2 tool calls (get_weather, get_weather), expected at most 1"
    )
    assert judge(ToolCallCount, Answer("no"), value=0) == Outcome.ok("0 tool calls (none), expected 0")


# --- arbitrary input never crashes a check ------------------------------------------------------------------------


@given(st.text(max_size=400))
def test_text_checks_judge_any_text(text: str) -> None:
    answer = Answer(text.strip())
    for check_type, params in (
        (JsonSchema, {"value": PRODUCT}),
        (WordCountRange, {"min": 1}),
    ):
        assert judge(check_type, answer, **params).status in ("passed", "failed")


@given(
    st.dictionaries(
        st.text(max_size=8),
        st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5), st.lists, max_leaves=5),
        max_size=5,
    )
)
def test_tool_args_schema_judges_any_arguments(arguments: dict[str, Any]) -> None:
    outcome = judge(ToolArgsSchema, tool_answer(("get_weather", arguments)), calls="all")
    assert outcome.status in ("passed", "failed")


def test_the_pass_rate_scorecard_is_registered_for_the_extra_suites(registry: Registry) -> None:
    from tsuka_checks_extra.scorecard import PassRate

    assert registry.scorecard_of("extra") is not None
    assert registry.scorecard_of("default") is None
    tests = [tsuka_core.JudgedTest(n, "json", score, errored, ()) for n, score, errored in
             [("a", 1.0, False), ("b", 0.5, False), ("c", 1.0, True), ("d", 1.0, False)]]  # fmt: skip
    figures = PassRate().figures("extra", tests)
    assert figures["passed"] == tsuka_core.Figure(value=0.5, count=4)
    rows = PassRate().rows({"extra": figures, "extra-2": {"passed": tsuka_core.Figure(value=1.0, count=2)}})
    assert [r.label for r in rows] == ["All suites", "extra", "extra-2"]
    assert rows[0].figure is not None
    assert rows[0].figure.value == pytest.approx(0.75)
