"""One single-turn BFCL entry as a tsuka test: BFCL's messages and tools, judged as BFCL's checker judges.

The request is what BFCL's function-calling handler sends: the entry's first
turn's messages as they are, its functions as tools (``bfcl.tools``). The
answer is judged with ``tool_calls_match`` stating BFCL's rules: exactly one
call (simple and multiple categories) or one per possible answer (parallel),
paired in any order; no argument beyond the possible answer's (``only_named``);
an argument whose possible answers hold ``""`` may be absent (and, a string,
may be ``""``; an array, ``[]``: BFCL reads an absent marker so), one whose only
possible answer is ``""`` must be absent; strings compared as BFCL compares
them; a Java or JavaScript argument read from its source text by its declared
type (``read_as``). Irrelevance wants no call; relevance some call whose
arguments are valid JSON.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from tsuka_checks_builtin.bfcl.categories import Category
from tsuka_checks_builtin.bfcl.tools import OPENAPI_TYPES, tool_name, tool_of
from tsuka_checks_builtin.sourcetext import Language, kind_of

__all__ = ["MAX_EXPANSIONS", "expected_call", "test_of"]

MAX_EXPANSIONS = 4096
"""The most concrete values one possible dict (or array of dicts) expands into; more are cut there."""
_ABSENT = ""
"""BFCL's possible answer meaning "the argument is absent"."""


def test_of(category: Category, question: Mapping[str, Any], answer: Mapping[str, Any] | None) -> dict[str, Any]:
    """One BFCL entry (its question, and its possible answer where it has one) as a tsuka test file."""
    test: dict[str, Any] = {
        "name": str(question["id"]),
        "description": f"BFCL {question['id']}",
        "category": "toolCalling",
        "tools": [tool_of(f, category.language) for f in question["function"]],
    }
    test.update(_conversation(question["question"][0]))
    if category.judged == "irrelevance":
        checks: list[dict[str, Any]] = [{"type": "tool_not_called"}]
    elif category.judged == "relevance":
        checks = [{"type": "tool_calls_count", "value": 1, "mode": "at_least", "well_formed": True}]
    else:
        assert answer is not None, f"{question['id']} has no possible answer"
        functions = {str(f["name"]): f for f in question["function"]}
        calls = [expected_call(call, functions, category.language) for call in answer["ground_truth"]]
        if category.calls == "one":
            calls = calls[:1]
        checks = [{"type": "tool_calls_match", "calls": calls, "only_named": True, "normalize": True}]
    return {**test, "checks": checks}


def _conversation(messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The first turn's messages as a test states them: ``system``, earlier ``messages``, and the ``prompt``."""
    found = [{"role": str(m["role"]), "content": str(m["content"])} for m in messages]
    last = found.pop() if found and found[-1]["role"] == "user" else {"role": "user", "content": ""}
    parts: dict[str, Any] = {"prompt": last["content"]}
    if found and found[0]["role"] == "system" and all(m["role"] != "system" for m in found[1:]):
        parts["system"] = found.pop(0)["content"]
    if found:
        parts["messages"] = found
    return parts


def expected_call(
    ground_truth: Mapping[str, Any], functions: Mapping[str, Mapping[str, Any]], language: str = "python"
) -> dict[str, Any]:
    """One BFCL ground-truth call ``{function: {param: [values]}}`` as an expected call of ``tool_calls_match``."""
    ((name, params),) = ground_truth.items()
    declared = functions.get(name, {}).get("parameters", {}).get("properties", {})
    accept: dict[str, list[Any]] = {}
    optional: list[str] = []
    read_as: dict[str, dict[str, Any]] = {}
    for param, values in params.items():
        schema = declared.get(param, {})
        kind = schema.get("type") if isinstance(schema, Mapping) else None
        reading = _read_as(language, kind, schema) if language != "python" and isinstance(kind, str) else None
        if reading is not None:
            read_as[param] = reading
        concrete = [c for v in values if v != _ABSENT for c in _accepted(v)]
        if _ABSENT in values:
            optional.append(param)
            json_kind = kind_of(reading["language"], str(kind)) if reading else OPENAPI_TYPES.get(str(kind))
            concrete += _ABSENT_SENT.get(str(json_kind), [])
        if concrete:
            accept[param] = concrete
    call: dict[str, Any] = {"name": tool_name(name), "accept": accept, "optional": optional, "read_as": read_as}
    return {k: v for k, v in call.items() if v}


_ABSENT_SENT: Mapping[str, list[Any]] = {"string": [""], "array": [[]]}
"""What BFCL's absent marker ``""`` also accepts when sent, by the argument's JSON kind: its string checker
reads the marker as ``""``, its array checker as ``[]``; for any other kind the argument must be absent."""


def _read_as(language: str, kind: str, schema: Any) -> dict[str, Any] | None:
    """How a Java or JavaScript argument is read, as BFCL's checker reads it; None for a type it does not read."""
    read: Language = "java" if language == "java" else "javascript"
    if kind_of(read, kind) is None:
        return None
    reading: dict[str, Any] = {"language": read, "type": kind}
    items = schema.get("items") if isinstance(schema, Mapping) else None
    item = items.get("type") if isinstance(items, Mapping) else None
    if kind in ("Array", "ArrayList", "array") and isinstance(item, str) and kind_of(read, item) is not None:
        reading["items"] = item
    return reading


def _dicts(possible: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every concrete dict a BFCL possible dict stands for: each key one of its values, ``""`` meaning absent.

    A key whose possible values are a string rather than a list is read as BFCL's checker reads it: letter by
    letter, ``""`` among them (one entry of BFCL's data has such a key, and so no answer passes it there).
    """
    keys = list(possible)
    choices = [_choices(possible[k]) for k in keys]
    found: list[dict[str, Any]] = []
    for picked in itertools.islice(itertools.product(*choices), MAX_EXPANSIONS):
        found.append({k: v for k, v in zip(keys, picked, strict=True) if v != _ABSENT})
    return found


def _choices(values: Any) -> list[Any]:
    if isinstance(values, list):
        return values
    if isinstance(values, str):
        return [_ABSENT, *values]
    return [values]


def _accepted(value: Any) -> list[Any]:
    """The concrete values one BFCL possible value stands for (a dict or a list of dicts, expanded)."""
    if isinstance(value, Mapping):
        return _dicts(value)
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        return [list(c) for c in itertools.islice(itertools.product(*(_dicts(v) for v in value)), MAX_EXPANSIONS)]
    return [value]
