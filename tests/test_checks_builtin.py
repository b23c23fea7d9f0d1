"""The built-in check types: what passes, what fails, and the detail each reports (IFEval's in test_ifeval_checks)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from pydantic import ValidationError

import tsuka_core
from tsuka_core import Answer, Outcome, ToolCall, normalise_tool_call
from tsuka_core.judge.checks import run_check
from tsuka_core.judge.patterns import DEFAULT_TIMEOUT

Judge = Callable[..., Outcome]

BUILTIN_TYPES = {
    "word_count",
    "line_count",
    "tool_args_conform",
    "sentence_count",
    "first_word",
    "last_word",
    "contains",
    "not_contains",
    "regex",
    "not_regex",
    "not_empty",
    "json_valid",
    "json_path_equals",
    "json_path_type",
    "json_path_length",
    "tool_called",
    "tool_not_called",
    "tool_arg_equals",
    "tool_arg_regex",
    "tool_calls_count",
    "tool_call_at",
    "tool_arg_at",
    "tool_calls_match",
    "regex_count",
    "letter_count",
    "capital_word_count",
    "paragraph_count",
    "paragraph_first_word",
    "response_count",
    "title",
    "starts_with",
    "ends_with",
    "wrapped_in",
    "language",
    "letter_case",
    "instruction",
    "state_matches",
    "results_include",
}


def call(name: str, arguments: Any, index: int = 0) -> ToolCall:
    """A tool call as a server would send it, normalised."""
    raw = {"id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": arguments}}
    normalised = normalise_tool_call(raw, index)
    assert normalised is not None
    return normalised


def args(**values: Any) -> ToolCall:
    """A ``write_file`` call whose arguments arrive as a JSON string."""
    return call("write_file", json.dumps(values))


@pytest.fixture
def make(registry: tsuka_core.Registry) -> Callable[..., tsuka_core.CheckType[Any]]:
    """Build a check the way the suite loader does: validate the params, then instantiate."""

    def build(type_name: str, **params: Any) -> tsuka_core.CheckType[Any]:
        check_type = registry.check_type(type_name)
        assert check_type is not None, type_name
        return check_type(check_type.params_model.model_validate(params))

    return build


@pytest.fixture
def judge(make: Callable[..., tsuka_core.CheckType[Any]]) -> Judge:
    """Run one check on an answer: ``judge(type, text, calls, **params)``."""

    def run(type_name: str, text: str = "", calls: Sequence[ToolCall] = (), **params: Any) -> Outcome:
        return run_check(make(type_name, **params), Answer(text, tuple(calls)))

    return run


def test_every_builtin_type_is_registered(registry: tsuka_core.Registry) -> None:
    builtin = {name for name, entry in registry.check_types.items() if entry.distribution == "tsuka"}
    assert builtin == BUILTIN_TYPES


# --- word_count / line_count ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "status", "detail"),
    [
        ("one two  three\nfour", 4, "passed", "expected 4 words, got 4"),
        ("The cat sat on the warm red mat today", 8, "failed", "expected 8 words, got 9"),
        ("", 0, "passed", "expected 0 words, got 0"),
        ("\t spaced \u00a0 out\n", 2, "passed", "expected 2 words, got 2"),
    ],
)
def test_word_count(judge: Judge, text: str, value: int, status: str, detail: str) -> None:
    assert judge("word_count", text, value=value) == Outcome(status, detail)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "value", "status", "detail"),
    [
        ("iron\n\n   \ncopper\r\nzinc  ", 3, "passed", "expected 3 lines, got 3"),
        ("iron\ncopper\nzinc\ntin", 3, "failed", "expected 3 lines, got 4"),
        ("single line", 1, "passed", "expected 1 lines, got 1"),
        ("", 0, "passed", "expected 0 lines, got 0"),
    ],
)
def test_line_count(judge: Judge, text: str, value: int, status: str, detail: str) -> None:
    assert judge("line_count", text, value=value) == Outcome(status, detail)  # type: ignore[arg-type]


def test_count_rejects_negative_and_non_integer_values(make: Callable[..., Any]) -> None:
    with pytest.raises(ValidationError):
        make("word_count", value=-1)
    with pytest.raises(ValidationError):
        make("line_count", value="3")
    with pytest.raises(ValidationError):
        make("word_count", value=True)


# --- first_word / last_word -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_name", "text", "value", "flags", "status", "detail"),
    [
        ("first_word", "«Il cielo è blu.", "Il", "", "passed", "first word 'Il', expected 'Il'"),
        ("last_word", "«Il cielo è blu.»", "blu", "", "passed", "last word 'blu', expected 'blu'"),
        ("last_word", "Il cielo è blu .", "blu", "", "passed", "last word 'blu', expected 'blu'"),
        ("first_word", '"Every river runs"', "Every", "", "passed", "first word 'Every', expected 'Every'"),
        ("first_word", "every river", "Every", "", "failed", "first word 'every', expected 'Every'"),
        ("first_word", "every river", "Every", "i", "passed", "first word 'every', expected 'Every'"),
        ("last_word", "It is BLU!", "blu", "i", "passed", "last word 'BLU', expected 'blu'"),
        ("last_word", "It is BLU!", "blu", "", "failed", "last word 'BLU', expected 'blu'"),
        ("first_word", "¿Ça va, Zoë?", "Ça", "", "passed", "first word 'Ça', expected 'Ça'"),
        ("last_word", "¿Ça va, Zoë?", "Zoë", "", "passed", "last word 'Zoë', expected 'Zoë'"),
        ("last_word", "Take Route 66.", "66", "", "passed", "last word '66', expected '66'"),
        ("last_word", "I don't.", "don't", "", "passed", 'last word "don\'t", expected "don\'t"'),
        ("first_word", "", "Il", "", "failed", "no first word: the answer has no words"),
        ("last_word", "... !!!", "blu", "", "failed", "no last word: the answer has no words"),
    ],
)
def test_first_and_last_word(
    judge: Judge, type_name: str, text: str, value: str, flags: str, status: str, detail: str
) -> None:
    assert judge(type_name, text, value=value, flags=flags) == Outcome(status, detail)  # type: ignore[arg-type]


def test_word_checks_refuse_flags_other_than_i(make: Callable[..., Any]) -> None:
    with pytest.raises(ValidationError):
        make("first_word", value="Il", flags="m")


# --- contains / not_contains ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_name", "text", "params", "status", "detail"),
    [
        ("contains", "Hello World", {"value": "world"}, "passed", "'world' found"),
        ("contains", "Hello World", {"value": "world", "flags": ""}, "failed", "'world' not found"),
        ("contains", "Hello World", {"value": "World", "flags": ""}, "passed", "'World' found"),
        ("contains", "Hello World", {"value": "planet"}, "failed", "'planet' not found"),
        ("not_contains", "iron, copper", {"value": ","}, "failed", "',' found"),
        ("not_contains", "GOLD\nsilver", {"value": "gold"}, "failed", "'gold' found"),
        ("not_contains", "GOLD\nsilver", {"value": "gold", "flags": ""}, "passed", "'gold' not found"),
        ("not_contains", "iron copper", {"value": ","}, "passed", "',' not found"),
    ],
)
def test_contains_and_not_contains(
    judge: Judge, type_name: str, text: str, params: dict[str, str], status: str, detail: str
) -> None:
    assert judge(type_name, text, **params) == Outcome(status, detail)  # type: ignore[arg-type]


# --- regex / not_regex ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "flags", "found"),
    [
        ("Hello", "hello", "", False),
        ("Hello", "hello", "i", True),
        ("Hello\nWorld", "^World$", "", False),
        ("Hello\nWorld", "^World$", "m", True),
        ("Hello\nWorld", "^world$", "im", True),
        ("Hello\nWorld", "Hello.World", "", False),
        ("Hello\nWorld", "Hello.World", "s", True),
        ("Hello", "ell", "gu", True),
        ("Hello", "^ell", "gu", False),
        ("città 42", r"\p{L}+\s\d+", "", True),
    ],
)
def test_regex_flags(judge: Judge, text: str, value: str, flags: str, found: bool) -> None:
    seen = judge("regex", text, value=value, flags=flags)
    unseen = judge("not_regex", text, value=value, flags=flags)
    word = "matched" if found else "not matched"
    assert seen == Outcome("passed" if found else "failed", f"/{value}/ {word}")
    assert unseen == Outcome("failed" if found else "passed", f"/{value}/ {word}")


@pytest.mark.parametrize(
    ("text", "status"),
    [("iron\ncopper\nzinc", "passed"), ("iron\n- copper\nzinc", "failed"), ("Iron\ncopper", "failed")],
)
def test_not_regex_list_format(judge: Judge, text: str, status: str) -> None:
    outcome = judge("not_regex", text, value=r"[A-Z0-9]|^\s*[-•*.]", flags="m")
    assert outcome.status == status


@pytest.mark.parametrize("flags", ["x", "ig!", "I"])
def test_regex_refuses_unknown_flags(make: Callable[..., Any], flags: str) -> None:
    with pytest.raises(ValidationError, match="unknown regex flag"):
        make("regex", value="a", flags=flags)


def test_regex_that_does_not_compile_is_refused_at_load(make: Callable[..., Any]) -> None:
    with pytest.raises(ValidationError, match="regex does not compile"):
        make("not_regex", value="(unclosed")


@pytest.mark.parametrize(
    ("type_name", "calls", "params"),
    [
        ("regex", (), {}),
        ("tool_arg_regex", (call("f", {"text": "a" * 30000 + "b"}),), {"arg": "text"}),
    ],
)
def test_catastrophic_regex_ends_as_errored_in_time(
    judge: Judge, type_name: str, calls: tuple[ToolCall, ...], params: dict[str, str]
) -> None:
    started = time.process_time()
    outcome = judge(type_name, "a" * 30000 + "b", calls, value="(a+)+$", **params)
    elapsed = time.process_time() - started
    assert outcome.status == "errored"
    assert outcome.detail == f"regex search exceeded {DEFAULT_TIMEOUT:g} s"
    # Unguarded, this search would not end in any useful time. The regex module's limit counts the
    # search's own time, so it is measured in CPU time: other load on the machine does not stretch it.
    assert elapsed < 2 * DEFAULT_TIMEOUT + 2


# --- not_empty --------------------------------------------------------------------------------


def test_not_empty(judge: Judge) -> None:
    assert judge("not_empty", "hi there") == Outcome("passed", "8 characters: 'hi there'")
    assert judge("not_empty", "") == Outcome("failed", "empty answer")
    assert judge("not_empty", "", [call("f", "{}")]) == Outcome("failed", "empty answer (it made a tool call)")


# --- json_valid -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ('{"a": 1}', "strict object"),
        ("[1, 2, 3]", "strict array"),
        ('Here it is:\n```json\n{"a": [1, 2]}\n```\nDone.', "fenced object"),
        ('The result is {"total": 73} as requested.', "extracted object"),
        ("{'a': 1, 'b': [1, 2,],}", "repaired object"),
        ('{"name": "spoon", "price": 3', "repaired object"),
    ],
)
def test_json_valid_methods(judge: Judge, text: str, detail: str) -> None:
    assert judge("json_valid", text) == Outcome("passed", detail)


@pytest.mark.parametrize("text", ["", "I cannot produce that, sorry.", "The answer is yes (or maybe no)."])
def test_json_valid_fails_on_prose(judge: Judge, text: str) -> None:
    assert judge("json_valid", text) == Outcome("failed", "no JSON in the answer")


@pytest.mark.parametrize("text", ["Sure { happy to help } with that.", "{bad idea"])
def test_json_valid_fails_on_prose_with_stray_braces(judge: Judge, text: str) -> None:
    """Plain prose never passes, even when it holds a brace that json-repair turns into a string array."""
    assert judge("json_valid", text) == Outcome("failed", "no JSON in the answer")


# --- json_path_equals / json_path_type / json_path_length ------------------------------------

DOC = json.dumps(
    {
        "port": 8080,
        "port_float": 8080.0,
        "port_text": "8080",
        "ssl": True,
        "one": 1,
        "zero": 0,
        "nothing": None,
        "items": [{"name": "spoon", "price": 3}, {"name": "mug", "price": 6.5}],
        "nested": {"list": [1, 2.0, {"k": "v"}]},
    }
)


@pytest.mark.parametrize(
    ("path", "value", "passed"),
    [
        ("port", 8080, True),
        ("port", 8080.0, True),
        ("port_float", 8080, True),
        ("port_text", 8080, False),
        ("port", "8080", False),
        ("ssl", True, True),
        ("ssl", 1, False),
        ("one", True, False),
        ("nothing", 0, False),
        ("zero", None, False),
        ("nothing", None, True),
        ("items[0].name", "spoon", True),
        ("items[0].name", "Spoon", False),
        ("items[-1].price", 6.5, True),
        ("nested.list", [1, 2, {"k": "v"}], True),
        ("nested.list", [1, 2], False),
        ("items[?price > `5`].name | [0]", "mug", True),
    ],
)
def test_json_path_equals_is_typed(judge: Judge, path: str, value: Any, passed: bool) -> None:
    assert judge("json_path_equals", DOC, path=path, value=value).status == ("passed" if passed else "failed")


def test_json_path_equals_details(judge: Judge) -> None:
    assert judge("json_path_equals", DOC, path="port", value="8080") == Outcome(
        "failed", 'port is 8080, expected "8080"'
    )
    assert judge("json_path_equals", DOC, path="items[0].price", value=3) == Outcome(
        "passed", "items[0].price is 3, expected 3"
    )
    assert judge("json_path_equals", DOC, path="missing", value=None) == Outcome("failed", "nothing at path 'missing'")
    assert judge("json_path_equals", "no json here", path="a", value=1) == Outcome(
        "failed", "no JSON found in the answer"
    )


def test_json_path_refuses_a_bad_expression(make: Callable[..., Any]) -> None:
    with pytest.raises(ValidationError, match="not a valid JMESPath expression"):
        make("json_path_equals", path="items[?", value=1)


TYPES_DOC = json.dumps({"i": 3, "f": 2.5, "w": 2.0, "s": "x", "b": False, "a": [], "o": {}, "n": None})


@pytest.mark.parametrize(
    ("path", "value", "status", "detail"),
    [
        ("i", "integer", "passed", "i is integer, expected integer"),
        ("i", "number", "passed", "i is integer, expected number"),
        ("f", "number", "passed", "f is number, expected number"),
        ("f", "integer", "failed", "f is number, expected integer"),
        ("w", "integer", "passed", "w is integer, expected integer"),
        ("s", "string", "passed", "s is string, expected string"),
        ("b", "boolean", "passed", "b is boolean, expected boolean"),
        ("b", "number", "failed", "b is boolean, expected number"),
        ("a", "array", "passed", "a is array, expected array"),
        ("o", "object", "passed", "o is object, expected object"),
        ("o", "array", "failed", "o is object, expected array"),
        ("n", "null", "passed", "n is null, expected null"),
        ("missing", "null", "failed", "nothing at path 'missing'"),
    ],
)
def test_json_path_type_uses_json_schema_names(judge: Judge, path: str, value: str, status: str, detail: str) -> None:
    assert judge("json_path_type", TYPES_DOC, path=path, value=value) == Outcome(status, detail)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["float", "bool", "dict", "undefined"])
def test_json_path_type_refuses_javascript_and_python_names(make: Callable[..., Any], value: str) -> None:
    with pytest.raises(ValidationError):
        make("json_path_type", path="a", value=value)


@pytest.mark.parametrize(
    ("path", "value", "status", "detail"),
    [
        ("items", 2, "passed", "items has 2 elements, expected 2"),
        ("items", 3, "failed", "items has 2 elements, expected 3"),
        ("nested", 1, "failed", "nested is object, not an array"),
        ("port_text", 4, "failed", "port_text is string, not an array"),
        ("absent", 0, "failed", "nothing at path 'absent'"),
    ],
)
def test_json_path_length(judge: Judge, path: str, value: int, status: str, detail: str) -> None:
    assert judge("json_path_length", DOC, path=path, value=value) == Outcome(status, detail)  # type: ignore[arg-type]


# --- tool_called / tool_not_called ------------------------------------------------------------


def test_tool_called(judge: Judge) -> None:
    write, read = call("write_file", "{}"), call("read_file", "{}", 1)
    assert judge("tool_called", "", [write], value="write_file") == Outcome(
        "passed", "called write_file, expected write_file"
    )
    assert judge("tool_called", "", [write], value="Write_File").status == "failed"
    assert judge("tool_called", "", [read, write], value="write_file") == Outcome(
        "failed", "called read_file, expected write_file"
    )
    assert judge("tool_called", "hello", [], value="write_file") == Outcome("failed", "no tool call; answered 'hello'")
    assert judge("tool_called", "", [], value="write_file") == Outcome("failed", "no tool call")


def test_tool_not_called_without_value_means_no_call_at_all(judge: Judge) -> None:
    assert judge("tool_not_called", "It reports the weather.") == Outcome("passed", "tool calls: none")
    assert judge("tool_not_called", "", [call("get_weather", "{}")]) == Outcome("failed", "tool calls: get_weather")


def test_tool_not_called_with_value_means_no_call_of_that_name(judge: Judge) -> None:
    other, banned = call("find_user", "{}"), call("get_weather", "{}", 1)
    assert judge("tool_not_called", "", [other], value="get_weather") == Outcome(
        "passed", "get_weather not called (calls: find_user)"
    )
    assert judge("tool_not_called", "", [other, banned], value="get_weather") == Outcome(
        "failed", "get_weather called (calls: find_user, get_weather)"
    )
    assert judge("tool_not_called", "text", [], value="get_weather").status == "passed"


# --- tool_arg_equals / tool_arg_regex ---------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "arg", "value", "passed"),
    [
        ({"port": 8080}, "port", 8080, True),
        ({"port": 8080}, "port", 8080.0, True),
        ({"port": 8080.0}, "port", 8080, True),
        ({"port": "8080"}, "port", 8080, False),
        ({"port": 8080}, "port", "8080", False),
        ({"append": True}, "append", True, True),
        ({"append": True}, "append", 1, False),
        ({"append": "true"}, "append", True, False),
        ({"count": None}, "count", 0, False),
        ({"count": 0}, "count", None, False),
        ({"count": None}, "count", None, True),
        ({"file-name": "a.txt"}, "file-name", "a.txt", True),
        ({"options": {"mode": "fast"}}, "options.mode", "fast", True),
        ({"options": {"mode": "fast"}}, "options.mode", "FAST", False),
        ({"path": "a.txt"}, "content", None, False),
    ],
)
def test_tool_arg_equals_is_typed(judge: Judge, arguments: dict[str, Any], arg: str, value: Any, passed: bool) -> None:
    outcome = judge("tool_arg_equals", "", [args(**arguments)], arg=arg, value=value)
    assert outcome.status == ("passed" if passed else "failed")


def test_tool_arg_equals_details(judge: Judge) -> None:
    assert judge("tool_arg_equals", "", [args(path="deploy.log")], arg="path", value="deploy.log") == Outcome(
        "passed", 'path is "deploy.log", expected "deploy.log"'
    )
    assert judge("tool_arg_equals", "", [args(path="a")], arg="content", value="x") == Outcome(
        "failed", "write_file has no argument 'content'"
    )
    assert judge("tool_arg_equals", "plain text", [], arg="path", value="x") == Outcome("failed", "no tool call")


def test_tool_arg_checks_read_the_first_call_only(judge: Judge) -> None:
    first, second = call("find_user", '{"name": "Ann"}'), call("find_user", '{"name": "Bob"}', 1)
    assert judge("tool_arg_equals", "", [first, second], arg="name", value="Bob").status == "failed"
    assert judge("tool_arg_regex", "", [first, second], arg="name", value="bob").status == "failed"


def test_tool_arguments_given_as_object_are_read_and_broken_json_is_not_judged(judge: Judge) -> None:
    as_object = call("write_file", {"path": "deploy.log"})
    broken = call("write_file", '{"path": "deploy.log", "append": true')
    assert judge("tool_arg_equals", "", [as_object], arg="path", value="deploy.log").status == "passed"
    repaired = judge("tool_arg_equals", "", [broken], arg="append", value=True)
    assert repaired == Outcome(
        "failed", "write_file: arguments were not valid JSON as written (json-repair's reading is not judged)"
    )


@pytest.mark.parametrize("arguments", ["[1, 2]", '"deploy.log"', "42", "null", [1, 2], "not json at all"])
@pytest.mark.parametrize("type_name", ["tool_arg_equals", "tool_arg_regex"])
def test_tool_arg_checks_fail_when_arguments_are_not_an_object(judge: Judge, type_name: str, arguments: Any) -> None:
    outcome = judge(type_name, "", [call("write_file", arguments)], arg="path", value=".*")
    assert outcome.status == "failed"
    assert outcome.detail.startswith("write_file: tool arguments are not")


@pytest.mark.parametrize(
    ("arguments", "kind"),
    [("[1, 2]", "array"), ('"deploy.log"', "string"), ("42", "number"), ("4.5", "number"), ("true", "boolean")],
)
def test_not_an_object_detail_names_the_json_type(judge: Judge, arguments: str, kind: str) -> None:
    outcome = judge("tool_arg_equals", "", [call("write_file", arguments)], arg="path", value="x")
    assert outcome == Outcome("failed", f"write_file: tool arguments are not a JSON object (got {kind})")


@pytest.mark.parametrize(
    ("arguments", "arg", "value", "flags", "passed"),
    [
        ({"content": "[START] Deployment started"}, "content", r"\[start\]\s*deployment", None, True),
        ({"content": "[START] Deployment started"}, "content", r"\[start\]", "", False),
        ({"content": "[START] Deployment started"}, "content", r"\[START\]", "", True),
        ({"content": "line one\nline two"}, "content", "^line two$", "m", True),
        ({"content": "line one\nline two"}, "content", "^line two$", "", False),
        ({"append": True}, "append", "^true$", None, True),
        ({"port": 8080}, "port", "^8080$", None, True),
        ({"opts": {"a": 1, "b": [True, None]}}, "opts", '^{"a":1,"b":\\[true,null\\]}$', None, True),
        ({"file-name": "notes.md"}, "file-name", r"\.md$", None, True),
        ({"options": {"mode": "fast"}}, "options.mode", "^fast$", None, True),
        ({"path": "a.txt"}, "content", ".*", None, False),
        ({"path": "a.txt"}, "content", "^$", None, False),
    ],
)
def test_tool_arg_regex(
    judge: Judge, arguments: dict[str, Any], arg: str, value: str, flags: str | None, passed: bool
) -> None:
    params = {"arg": arg, "value": value} | ({} if flags is None else {"flags": flags})
    outcome = judge("tool_arg_regex", "", [args(**arguments)], **params)
    assert outcome.status == ("passed" if passed else "failed")


def test_tool_arg_regex_details(judge: Judge) -> None:
    assert judge("tool_arg_regex", "", [args(content="Hello World")], arg="content", value="hello") == Outcome(
        "passed", 'content "Hello World" matches /hello/'
    )
    assert judge("tool_arg_regex", "", [args(path="a")], arg="content", value=".*") == Outcome(
        "failed", "write_file has no argument 'content'"
    )


def test_tool_arg_refuses_an_empty_arg(make: Callable[..., Any]) -> None:
    with pytest.raises(ValidationError, match="must not be empty"):
        make("tool_arg_equals", arg="", value=1)


# --- run_check --------------------------------------------------------------------------------


class _Broken(tsuka_core.CheckType[tsuka_core.NoParams]):
    """A check type with a bug."""

    name = "broken"

    def evaluate(self, answer: Answer) -> Outcome:
        raise KeyError("oops")


def test_run_check_turns_an_exception_into_errored() -> None:
    outcome = run_check(_Broken(tsuka_core.NoParams()), Answer("text"))
    assert outcome == Outcome("errored", "broken raised KeyError: 'oops'")
