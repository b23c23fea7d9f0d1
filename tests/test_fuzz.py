"""Arbitrary model output never crashes a check or the answer parsing: properties over random input."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tsuka_core
from tsuka_core import Answer, CheckType, ToolCall, extract_json, normalise_tool_call, parse_arguments, strip_reasoning
from tsuka_core.judge.checks import run_check
from tsuka_core.judge.jsontools import ExtractedJson, json_equal

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
STATUSES = {"passed", "failed", "errored"}

# Every built-in check type, with the parameters a test file could give it (some of each kind).
CHECKS: list[tuple[str, dict[str, Any]]] = [
    ("word_count", {"value": 8}),
    ("line_count", {"value": 3}),
    ("first_word", {"value": "Every"}),
    ("last_word", {"value": "río", "flags": "i"}),
    ("contains", {"value": "{"}),
    ("not_contains", {"value": "rosso", "flags": ""}),
    ("regex", {"value": r"^\s*[\[{]", "flags": "ms"}),
    ("not_regex", {"value": r"[A-Z0-9]|^\s*[-•*.]", "flags": "m"}),
    ("not_empty", {}),
    ("json_valid", {}),
    ("json_path_equals", {"path": "items[0].name", "value": "spoon"}),
    ("json_path_equals", {"path": "items[?price > `3`].name | [0]", "value": None}),
    ("json_path_type", {"path": "a.b", "value": "integer"}),
    ("json_path_type", {"path": "length(@)", "value": "number"}),
    ("json_path_length", {"path": "[*]", "value": 2}),
    ("tool_called", {"value": "write_file"}),
    ("tool_not_called", {}),
    ("tool_not_called", {"value": "write_file"}),
    ("tool_arg_equals", {"arg": "path", "value": "deploy.log"}),
    ("tool_arg_equals", {"arg": "file-name", "value": {"a": [1, None]}}),
    ("tool_arg_equals", {"arg": "options.mode", "value": 8080}),
    ("tool_arg_regex", {"arg": "content", "value": "done|2\\.4"}),
    ("tool_arg_regex", {"arg": "options[0].x", "value": "^true$", "flags": ""}),
    ("tool_calls_count", {"value": 2}),
    ("tool_calls_count", {"value": 1, "mode": "at_least"}),
    ("tool_call_at", {"index": 1, "value": "write_file"}),
    ("tool_arg_at", {"index": 1, "arg": "options.mode", "value": 8080}),
    ("tool_calls_match", {"calls": [{"name": "write_file", "arguments": {"path": "a"}}, {"name": "write_file"}]}),
    (
        "tool_calls_match",
        {
            "calls": [{"name": "write_file", "accept": {"path": ["a", "b"]}, "optional": ["mode"]}],
            "normalize": True,
            "only_named": True,
        },
    ),
    ("tool_args_conform", {}),
    ("sentence_count", {"min": 1, "max": 3}),
    ("word_count", {"min": 2, "max": 5, "words": "alphanumeric"}),
    ("json_valid", {"as_written": True}),
    ("json_valid", {"ifeval": True}),
    ("regex_count", {"pattern": [r"\*[^\n\*]*\*", r"\*\*[^\n\*]*\*\*"], "trim": "*", "min": 2}),
    ("letter_count", {"letter": "e", "max": 9}),
    ("capital_word_count", {"min": 1}),
    ("sentence_count", {"splitter": "punkt", "max": 4}),
    ("paragraph_count", {"value": 2}),
    ("paragraph_count", {"min": 2, "divider": "blank line"}),
    ("paragraph_first_word", {"paragraphs": 2, "index": 2, "value": "then"}),
    ("response_count", {}),
    ("title", {}),
    ("starts_with", {"value": "Write"}),
    ("ends_with", {"value": "Any questions?", "trim": '"'}),
    ("wrapped_in", {"value": '"'}),
    ("language", {"value": "en"}),
    ("letter_case", {"case": "upper", "language": "en"}),
    ("instruction", {"id": "x", "checks": [{"type": "not_contains", "value": ","}, {"type": "title"}]}),
    ("state_matches", {}),
    ("results_include", {}),
]


@pytest.fixture(scope="module")
def checks(registry: tsuka_core.Registry) -> list[CheckType[Any]]:
    built = []
    for type_name, params in CHECKS:
        check_type = registry.check_type(type_name)
        assert check_type is not None, type_name
        built.append(check_type(check_type.params_model.model_validate(params)))
    return built


def test_every_builtin_type_is_fuzzed(registry: tsuka_core.Registry) -> None:
    builtin = {n for n, entry in registry.check_types.items() if entry.distribution == "tsuka"}
    assert {name for name, _ in CHECKS} == builtin


json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
brackets = st.text(alphabet='{}[]":,\\ntrue0123456789 `\n<>/think', max_size=200)
deep = st.builds(
    lambda opener, depth, tail: opener * depth + tail,
    st.sampled_from(["[", "{", '{"a":', "[{", "```json\n{", "<think>"]),
    st.integers(0, 3000),
    st.text(max_size=10),
)
texts = st.text() | brackets | deep | json_values.map(json.dumps) | json_values.map(lambda v: f"Here: {v!r} ok")

raw_arguments = (
    json_values
    | st.text()
    | brackets
    | json_values.map(json.dumps)
    | st.dictionaries(st.text(max_size=8), json_values).map(lambda d: json.dumps(d)[:-1])
    | st.fixed_dictionaries({"content": st.text(), "options": json_values, "file-name": json_values})
)
raw_calls = st.fixed_dictionaries(
    {},
    optional={
        "id": st.none() | st.text(max_size=5) | st.integers(),
        "type": st.just("function"),
        "function": st.fixed_dictionaries(
            {},
            optional={
                "name": st.sampled_from(["write_file", "read_file", ""]) | st.text(max_size=5) | st.none(),
                "arguments": raw_arguments,
            },
        )
        | json_scalars,
    },
)


def calls_of(raws: list[dict[str, Any]]) -> tuple[ToolCall, ...]:
    found = (normalise_tool_call(raw, i) for i, raw in enumerate(raws))
    return tuple(call for call in found if call is not None)


OFFERED = (
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "mode": {"type": "integer", "enum": [1, 2]}},
                "required": ["path"],
            },
        },
    },
)
"""A tool offered with every fuzzed answer, so that the checks judging arguments by its schema are reached."""


@FUZZ
@given(text=texts, raws=st.lists(raw_calls, max_size=3), cut=st.booleans())
def test_no_check_raises_on_any_answer(
    checks: list[CheckType[Any]], text: str, raws: list[dict[str, Any]], cut: bool
) -> None:
    answer = Answer(strip_reasoning(text), calls_of(raws), OFFERED, cut)
    for check in checks:
        outcome = run_check(check, answer)
        assert outcome.status in STATUSES
        assert isinstance(outcome.detail, str)
        assert outcome.status != "errored" or "exceeded" in outcome.detail or "nested" in outcome.detail, (
            check.name,
            outcome,
        )


@FUZZ
@given(text=texts)
def test_extract_json_never_raises(text: str) -> None:
    found = extract_json(text)
    assert found is None or isinstance(found, ExtractedJson)
    if found is not None:
        assert found.method in {"strict", "fenced", "extracted", "repaired"}


@FUZZ
@given(value=json_values)
def test_extract_json_reads_any_json_document(value: Any) -> None:
    text = json.dumps(value)
    if "NaN" in text or "Infinity" in text:
        return
    found = extract_json(text)
    assert found is not None
    assert found.method == "strict"
    assert json_equal(found.value, value)


@FUZZ
@given(text=texts)
def test_strip_reasoning_never_raises_and_removes_think_tags(text: str) -> None:
    stripped = strip_reasoning(text)
    assert "<think>" not in stripped
    assert "</think>" not in stripped
    assert stripped == stripped.strip()


@FUZZ
@given(raw=raw_arguments | st.none() | st.binary(max_size=20))
def test_parse_arguments_never_raises(raw: Any) -> None:
    arguments, problem = parse_arguments(raw)
    assert (problem is None) == isinstance(arguments, dict)
    assert problem is None or isinstance(problem, str)


@FUZZ
@given(raw=raw_calls, index=st.integers(0, 10))
def test_normalise_tool_call_never_raises(raw: dict[str, Any], index: int) -> None:
    call = normalise_tool_call(raw, index)
    if call is not None:
        assert isinstance(call.name, str)
        assert call.name
        assert call.id
        assert (call.arguments_problem is None) == isinstance(call.arguments, dict)


HUGE = [
    "[" * 100_000,
    "{" * 100_000,
    '{"a":' * 50_000,
    "[" * 50_000 + "]" * 50_000,
    "x" * 2_000_000 + "{",
    "{ " * 500_000,
    "```json\n" + "[" * 10_000,
    "<think>" * 10_000 + "</think>" * 5_000 + "{}",
]
HUGE_IDS = ["brackets", "braces", "keys", "balanced", "long-prose", "spaced-braces", "fenced", "think"]


@pytest.mark.parametrize("text", HUGE, ids=HUGE_IDS)
def test_huge_and_deeply_nested_text_is_handled_in_time(checks: list[CheckType[Any]], text: str) -> None:
    started = time.process_time()
    write = normalise_tool_call({"id": "c", "function": {"name": "write_file", "arguments": {"content": text}}}, 0)
    answer = Answer(strip_reasoning(text), (write,) if write else ())
    statuses = {run_check(check, answer).status for check in checks}
    assert statuses <= STATUSES
    assert time.process_time() - started < 30  # CPU time: the judging's own cost, whatever the machine's load


@pytest.mark.parametrize("arguments", HUGE, ids=HUGE_IDS)
def test_huge_and_deeply_nested_arguments_never_raise(arguments: str) -> None:
    """Arguments as a JSON string nested past the recursion limit are a problem to report, not a crash."""
    parsed, problem = parse_arguments(arguments)
    assert (problem is None) == isinstance(parsed, dict)
    call = normalise_tool_call({"id": "c", "function": {"name": "write_file", "arguments": arguments}}, 0)
    assert call is not None
    assert call.name == "write_file"
