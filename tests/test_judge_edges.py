"""The edges of what the judge reads from an answer: JSON inside prose, tool calls and their arguments, calls written
as text. Each case sits where a changed comparison, bound or default would give another reading (mutation testing
found these unheld)."""

from __future__ import annotations

from typing import Any

import pytest

from tsuka_core.judge.answer import (
    MAX_TOOL_CALLS,
    Answer,
    ToolCall,
    normalise_tool_call,
    normalise_tool_calls,
    read_arguments,
    without_reasoning,
)
from tsuka_core.judge.checks import first_call_argument
from tsuka_core.judge.jsontools import MAX_CANDIDATES, JsonPath, extract_json, json_equal
from tsuka_core.judge.patterns import Pattern
from tsuka_core.judge.schemas import MAX_FORMAT_CHARS, schema_validator
from tsuka_core.judge.textcalls import text_tool_call

# --- JSON inside prose --------------------------------------------------------------------------------------------

EMBEDDED: dict[str, tuple[str, Any]] = {
    "an object at the very start, words after it": ('{"a": 1} is the answer', {"a": 1}),
    "the first of two objects": ('first {"a": 1} then {"b": 2} done', {"a": 1}),
    "the first of two arrays": ("first [1, 2] then [3] done", [1, 2]),
    "an array in prose": ("answer: [1, 2] ok", [1, 2]),
    "an object after a brace that opens nothing": ('oops { not json, then {"a": 1} ok', {"a": 1}),
    "an object after a bracket that opens nothing": ('a [ b {"a": 1} c', {"a": 1}),
    "an array after a brace that opens nothing": ("oops { not json, but [1, 2] ok", [1, 2]),
    "an object right after a brace that opens nothing": ('x {{"a": 1}} y', {"a": 1}),
    "an object after an empty one": ('{} and {"a": 1} ok', {"a": 1}),
    "an object after an empty array": ('[] and {"a": 1} ok', {"a": 1}),
    "an object after one holding NaN": ('see {"a": NaN} and {"b": 1} ok', {"b": 1}),
}


@pytest.mark.parametrize(("text", "expected"), list(EMBEDDED.values()), ids=list(EMBEDDED))
def test_json_inside_prose_is_the_first_whole_value_found(text: str, expected: Any) -> None:
    found = extract_json(text)

    assert found is not None
    assert (found.value, found.method) == (expected, "extracted")


def test_json_inside_prose_is_looked_for_at_no_more_than_the_candidates_bound() -> None:
    last_tried = "{ " * (MAX_CANDIDATES - 1) + '{"a": 1} end'
    past_it = "{ " * MAX_CANDIDATES + '{"a": 1} end'

    within = extract_json(last_tried)
    beyond = extract_json(past_it)

    assert within is not None
    assert (within.value, within.method) == ({"a": 1}, "extracted")
    assert beyond is None or beyond.method != "extracted"  # the bound holds: only repair may read it


# --- tool calls and their arguments --------------------------------------------------------------------------------


def call(name: object = "find", arguments: object = '{"q": 1}', call_id: object = "c9") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


@pytest.mark.parametrize("name", ["", 5, None])
def test_a_call_without_a_name_is_no_call(name: object) -> None:
    assert normalise_tool_call(call(name=name), 0) is None


@pytest.mark.parametrize("call_id", ["", 7, None])
def test_a_call_without_an_id_is_named_by_its_place(call_id: object) -> None:
    found = normalise_tool_call(call(call_id=call_id), 3)

    assert found is not None
    assert (found.id, found.name, found.arguments) == ("call_3", "find", {"q": 1})


def test_the_calls_past_the_bound_are_kept_but_their_arguments_not_read() -> None:
    calls = [call(call_id=f"c{i}") for i in range(MAX_TOOL_CALLS + 1)]

    found = normalise_tool_calls(calls)

    assert len(found) == MAX_TOOL_CALLS + 1
    last_read, unread = found[MAX_TOOL_CALLS - 1], found[MAX_TOOL_CALLS]
    assert (last_read.arguments, last_read.arguments_problem) == ({"q": 1}, None)
    assert (unread.id, unread.name, unread.arguments, unread.raw) == (f"c{MAX_TOOL_CALLS}", "find", None, calls[-1])
    assert unread.arguments_problem == f"not judged: the answer holds more than {MAX_TOOL_CALLS} tool calls"


def test_arguments_repaired_within_the_answers_budget_say_so() -> None:
    found = normalise_tool_call(call(arguments='{"q": 1'), 0, deadline=None)
    shared = normalise_tool_calls([call(arguments='{"q": 1'), call(arguments="[2")])

    assert found is not None
    assert (found.arguments, found.arguments_problem, found.repaired) == ({"q": 1}, None, True)
    assert [(c.arguments, c.repaired) for c in shared] == [({"q": 1}, True), ([2], True)]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", ({}, None, False)),
        ("   ", ({}, None, False)),
        ('{"q": 1}', ({"q": 1}, None, False)),
        ('{"q": 1', ({"q": 1}, None, True)),
        ("[" * 100_000, (None, "tool arguments are nested too deeply to read", False)),
        ("not json at all", (None, "tool arguments are not JSON", False)),
        ("[1, 2", ([1, 2], "tool arguments are not a JSON object (got array)", True)),
        ({"q": 1}, ({"q": 1}, None, False)),
    ],
)
def test_arguments_are_read_as_the_checks_see_them(raw: object, expected: tuple[Any, str | None, bool]) -> None:
    assert read_arguments(raw) == expected


# --- calls written as text ----------------------------------------------------------------------------------------

TEXT_CALLS: dict[str, tuple[str, str | None]] = {
    "the first of two tagged calls": (
        '<tool_call>{"name": "first", "arguments": {}}</tool_call> <tool_call>{"name": "second", "arguments": {}}'
        "</tool_call>",
        "first",
    ),
    "a function tag's name": ("<function=lookup>{}</function> and <function=other>{}</function>", "lookup"),
    "Mistral's name before its arguments": ('[TOOL_CALLS]find[ARGS]{"a": 1} [TOOL_CALLS]other[ARGS]{}', "find"),
    "a call wrapped as a function": ('{"function": {"name": "wrapped", "arguments": {}}}', "wrapped"),
    "a tagged call without a name": ('<tool_call>{"arguments": {}}</tool_call>', ""),
    "a tagged call that is not JSON": ("<tool_call>not json</tool_call>", ""),
    "an object that is no call": ('{"name": "x"}', None),
}


@pytest.mark.parametrize(("text", "expected"), list(TEXT_CALLS.values()), ids=list(TEXT_CALLS))
def test_a_call_written_as_text_is_named(text: str, expected: str | None) -> None:
    assert text_tool_call(text) == expected


# --- reasoning blocks, JSON repair, JSON equality ------------------------------------------------------------------


def test_every_think_block_is_removed_left_to_right() -> None:
    assert without_reasoning("<think>a</think>x<think>b</think>y") == "xy"
    assert without_reasoning("x<think>a</think>y<think>unclosed") == "xy"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('note {"a": 1, "b": {"c": 2', {"a": 1, "b": {"c": 2}}),
        ("list [1, [2, 3", [1, [2, 3]]),
        ("list [1, 2", [1, 2]),
    ],
)
def test_repair_starts_at_the_first_bracket(text: str, expected: Any) -> None:
    found = extract_json(text)

    assert found is not None
    assert (found.value, found.method) == (expected, "repaired")


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        ([1], 1, False),
        ({"a": 1}, "a", False),
        ({"a": 1}, {"b": 1}, False),
        ({"a": 1}, {"a": 2}, False),
        ({"a": [1, 2.0]}, {"a": [1.0, 2]}, True),
        (True, 1, False),
    ],
)
def test_json_equality(left: Any, right: Any, equal: bool) -> None:
    assert json_equal(left, right) is equal
    assert json_equal(right, left) is equal


# --- patterns, the first call's argument ----------------------------------------------------------------------------


def test_a_pattern_keeps_what_it_was_made_with_and_names_an_unknown_flag() -> None:
    pattern = Pattern.compile("a+", "i", timeout=0.5)

    assert (pattern.source, pattern.flags, pattern.timeout, pattern.search("xAAy")) == ("a+", "i", 0.5, True)
    with pytest.raises(ValueError, match=r"^unknown regex flag\(s\) 'qz'; use any of "):
        Pattern.compile("a", "zq")


def test_the_first_calls_argument_named_as_written_is_read_literally() -> None:
    found = ToolCall("c1", "save", {"file-name": "a.txt", "file": 1, "name": 2}, None, {})
    value, call_found, failed = first_call_argument(Answer("", (found,)), "file-name")

    assert (value, call_found, failed) == ("a.txt", found, None)


# --- JSON Schema as the json_schema check reads it ------------------------------------------------------------------


def errors(schema: dict[str, Any], instance: Any) -> list[str]:
    return [error.message for error in schema_validator(schema).iter_errors(instance)]


def test_the_draft_a_schema_names_is_the_one_it_is_read_by() -> None:
    draft_7 = {"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}]}
    unnamed = {"$schema": "urn:not-a-draft", "prefixItems": [{"type": "string"}]}

    assert errors(draft_7, [1]) == ["1 is not of type 'string'"]  # draft 7 reads an array of items by position
    assert errors(unnamed, [1]) == ["1 is not of type 'string'"]  # an unknown draft is read as 2020-12


def test_formats_are_checked_and_a_string_too_long_for_one_conforms_to_none() -> None:
    schema = {"type": "string", "format": "date"}

    assert errors(schema, "2024-01-05") == []
    assert errors(schema, "2024-13-45") == ["'2024-13-45' is not a 'date'"]
    assert len(errors({"type": "string", "format": "email"}, "a" * (MAX_FORMAT_CHARS + 1) + "@b.c")) == 1
    assert errors({"type": "string", "format": "iri"}, "not an iri at all") == []  # never checked


def test_a_pattern_in_a_schema_must_match() -> None:
    assert errors({"type": "string", "pattern": "^a"}, "abc") == []
    assert errors({"type": "string", "pattern": "^a"}, "bcd") == ["'bcd' does not match '^a'"]


@pytest.mark.parametrize(
    ("items", "unique"),
    [
        ([{"a": 1, "b": 2}, {"b": 2, "a": 1}], False),
        ([{"a": 1}, {"a": 1.0}], False),
        ([{"a": 1}, {"b": 1}], True),
        ([[1], [2]], True),
        ([[1], [1.0]], False),
        ([1, True], True),
    ],
)
def test_unique_items_compares_json_values(items: list[Any], unique: bool) -> None:
    assert (errors({"uniqueItems": True}, items) == []) is unique


def test_unique_items_judges_arrays_only_and_only_when_asked() -> None:
    assert errors({"uniqueItems": True}, "aa") == []
    assert errors({"uniqueItems": False}, [1, 1]) == []


def test_a_string_of_exactly_the_format_limit_is_still_checked() -> None:
    at_limit = "a" * (MAX_FORMAT_CHARS - 4) + "@b.c"

    assert errors({"type": "string", "format": "email"}, at_limit) == []
    assert len(errors({"type": "string", "format": "email"}, at_limit + "x")) == 1


def test_a_whole_float_is_an_integer_unless_asked_to_be_strict() -> None:
    assert errors({"type": "integer"}, 5.0) == []
    assert len(list(schema_validator({"type": "integer"}, strict_integer=True).iter_errors(5.0))) == 1


def test_a_path_is_a_jmespath_expression_unless_asked_to_read_a_name_as_written() -> None:
    with pytest.raises(ValueError, match=r"^not a valid JMESPath expression") as raised:
        JsonPath("a[")
    assert (
        str(raised.value)
        == 'not a valid JMESPath expression: Invalid jmespath expression: Incomplete expression: "a[" ^'
    )
    with pytest.raises(ValueError, match=r"^not a valid JMESPath expression: .*Unknown token '-'"):
        JsonPath("file-name")
    assert JsonPath("file-name", literal_key=True).find({"file-name": 1, "file": 2}) == 1
    assert JsonPath("X-name", literal_key=True).find({"X-name": 3}) == 3
