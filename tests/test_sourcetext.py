"""Java and JavaScript arguments read from their source text by type, and judged per argument as BFCL judges."""

from __future__ import annotations

from typing import Any

import pytest

from tsuka_checks_builtin.sourcetext import read_source
from tsuka_core import Answer, ToolCall
from tsuka_core.testing import run_check


@pytest.mark.parametrize(
    ("text", "kind", "items", "read"),
    [
        ("true", "boolean", None, True),
        ("True", "boolean", None, "True"),  # no Java boolean: stays text
        ("42", "integer", None, 42),
        ("42L", "long", None, 42),
        ("42", "long", None, "42"),
        ("1.5f", "float", None, 1.5),
        ("1.5", "float", None, "1.5"),
        ("1.5", "double", None, 1.5),
        ("'a'", "char", None, "'a'"),  # BFCL reads no char
        ("new int[]{1, 2, 3}", "Array", "integer", [1, 2, 3]),
        ('new String[]{"a", "b"}', "Array", "String", ['"a"', '"b"']),  # an Array's strings keep their quotes
        ('new ArrayList<>(Arrays.asList("a", "b"))', "ArrayList", "String", ["a", "b"]),
        ("new ArrayList<Long>() {{ add(1L); add(2L); }}", "ArrayList", "long", [1, 2]),
        ("new ArrayList<>()", "ArrayList", "String", []),
        ('new HashMap<String, Object>() {{ put("k", 1); put("v", "x"); }}', "HashMap", None, {"k": 1, "v": "x"}),
        ("myMap", "HashMap", None, "myMap"),  # a variable's name
    ],
)
def test_java_source_text_reads_as_bfcl_reads_it(text: str, kind: str, items: str | None, read: Any) -> None:
    assert read_source(text, "java", kind, items) == read


@pytest.mark.parametrize(
    ("text", "kind", "items", "read"),
    [
        ("'abc'", "String", None, "abc"),
        ('"abc"', "String", None, "abc"),
        ("abc", "String", None, "abc"),
        ("5", "float", None, 5.0),
        ("5n", "Bigint", None, 5),
        ("[1, 2]", "array", None, [1, 2]),
        ("['a', 'b']", "array", "String", ["a", "b"]),
        ("[[1, 2], [3]]", "array", "float", [[1, 2], [3]]),
        ("{'key': 'value', 'n': 2}", "dict", None, {"key": "value", "n": 2}),
        ("{}", "dict", None, {}),
        ("settings", "dict", None, "settings"),
    ],
)
def test_javascript_source_text_reads_as_bfcl_reads_it(text: str, kind: str, items: str | None, read: Any) -> None:
    assert read_source(text, "javascript", kind, items) == read


TOOL = {
    "type": "function",
    "function": {
        "name": "fetch",
        "parameters": {
            "type": "object",
            "properties": {
                "useShort": {"type": "string"},
                "ids": {"type": "string"},
                "limit": {"type": "string"},
                "meal": {"type": "string"},
            },
            "required": ["useShort"],
        },
    },
}
CALL = {
    "name": "fetch",
    "accept": {"useShort": [True], "ids": [[101, 202]], "limit": [50]},
    "optional": ["ids", "limit", "meal"],
    "read_as": {
        "useShort": {"language": "java", "type": "boolean"},
        "ids": {"language": "java", "type": "ArrayList", "items": "long"},
        "limit": {"language": "java", "type": "long"},
    },
}


def _judged(arguments: dict[str, Any]) -> bool:
    answer = Answer("", (ToolCall("c0", "fetch", arguments),), [TOOL])
    return run_check("tool_calls_match", {"calls": [CALL], "only_named": True, "normalize": True}, answer).passed


def test_each_argument_is_read_by_its_own_type() -> None:
    assert _judged({"useShort": "true"})
    assert _judged({"useShort": "true", "ids": "new ArrayList<>(Arrays.asList(101L, 202L))", "limit": "50L"})
    assert not _judged({"useShort": "True"})  # "True" is no Java boolean, whatever normalising strings would say
    assert not _judged({"useShort": True})  # a JSON boolean is not the source text BFCL wants
    assert not _judged({"useShort": "true", "limit": "50"})  # a long is written 50L
    assert not _judged({"useShort": "true", "ids": "new ArrayList<>(Arrays.asList(101, 202))"})  # items of long


def test_an_argument_only_optional_names_must_be_absent() -> None:
    """BFCL's possible answer [""]: present with any value, it fails, even where normalising would not matter."""
    assert _judged({"useShort": "true"})
    assert not _judged({"useShort": "true", "meal": "x"})


def test_a_read_as_type_no_reader_knows_is_refused_when_the_suite_loads() -> None:
    answer = Answer("", (ToolCall("c0", "fetch", {"useShort": "x"}),), [TOOL])
    bad = {**CALL, "read_as": {"useShort": {"language": "java", "type": "Queue"}}}
    with pytest.raises(Exception, match="'Queue' is not a java type tsuka reads"):
        run_check("tool_calls_match", {"calls": [bad]}, answer)
