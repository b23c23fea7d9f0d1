"""The JSON Schema of a test file: valid itself, accepts every real suite, refuses what the loader refuses."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import tsuka_core
from tsuka_checks_builtin.plugin import CHECK_TYPES
from tsuka_core import Registry
from tsuka_core.judge.checks import describe
from tsuka_core.plugins.manager import LoadedPlugin
from tsuka_core.suite.schema import SCHEMA_DIALECT, SCHEMA_ID, check_schema, suite_schema
from tsuka_core.suite.testfile import MAX_WEIGHT, TestFile, parse_test


@pytest.fixture(scope="module")
def schema(registry: Registry) -> dict[str, Any]:
    return suite_schema(registry)


@pytest.fixture(scope="module")
def validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema)


def errors(validator: jsonschema.Draft202012Validator, document: Any) -> list[str]:
    return [f"{error.json_path}: {error.message}" for error in validator.iter_errors(document)]


OK: dict[str, Any] = {"name": "ok", "category": "instruction", "prompt": "Say hi.", "checks": [{"type": "not_empty"}]}
CHAIN: dict[str, Any] = {
    "name": "chain",
    "category": "toolCalling",
    "steps": [
        {"prompt": "Find Ann.", "checks": [{"type": "tool_called", "value": "find_user"}]},
        {"toolResult": "{}", "checks": [{"type": "tool_arg_equals", "arg": "id", "value": 7, "weight": 2}]},
    ],
}


def test_schema_is_a_valid_draft_2020_12_schema(schema: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == SCHEMA_DIALECT == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == SCHEMA_ID
    assert schema["title"] == "tsuka test file"
    assert schema["additionalProperties"] is False
    json.dumps(schema)  # plain JSON, ready to be written to a file


def test_schema_has_one_branch_per_check_type(schema: dict[str, Any], registry: Registry) -> None:
    branches = schema["$defs"]["check"]["oneOf"]
    names = [branch["$ref"].removeprefix("#/$defs/check-") for branch in branches]
    assert names == sorted(registry.check_types)
    assert len(names) == len(CHECK_TYPES)
    for name in names:
        definition = schema["$defs"][f"check-{name}"]
        assert definition["properties"]["type"]["const"] == name
        assert definition["description"] == describe(registry.check_types[name].cls)
        assert definition["description"]
        assert definition["additionalProperties"] is False
        assert "weight" in definition["properties"]


def test_check_branches_carry_the_params_models(schema: dict[str, Any]) -> None:
    defs = schema["$defs"]
    assert defs["check-first_word"]["required"] == ["type", "value"]
    assert defs["check-word_count"]["required"] == ["type"]
    assert {"required": ["min"]} in defs["check-word_count"]["anyOf"]  # value, min or max
    exact = defs["check-word_count"]["properties"]["value"]["anyOf"][0]
    assert (exact["type"], exact["minimum"]) == ("integer", 0)
    assert sorted(defs["check-tool_arg_regex"]["required"]) == ["arg", "type", "value"]
    assert defs["check-tool_not_called"]["required"] == ["type"]
    assert defs["check-not_empty"]["required"] == ["type"]
    assert defs["check-json_path_type"]["properties"]["value"]["enum"] == [
        "string",
        "number",
        "integer",
        "boolean",
        "array",
        "object",
        "null",
    ]
    assert defs["check-tool_arg_equals"]["properties"]["value"]["description"]


def test_every_reference_file_validates(validator: jsonschema.Draft202012Validator, reference_suite: Path) -> None:
    files = sorted(reference_suite.glob("*.json"))
    assert len(files) == 7
    for file in files:
        assert errors(validator, json.loads(file.read_bytes())) == [], file.name


def test_every_default_suite_file_validates(validator: jsonschema.Draft202012Validator, default_suite: Path) -> None:
    files = sorted(default_suite.glob("*.json"))
    assert len(files) == 7
    for file in files:
        assert errors(validator, json.loads(file.read_bytes())) == [], file.name


@pytest.mark.parametrize("document", [OK, CHAIN], ids=["short", "long"])
def test_both_forms_validate(
    validator: jsonschema.Draft202012Validator, registry: Registry, document: dict[str, Any]
) -> None:
    assert errors(validator, document) == []
    assert parse_test("t.json", document, registry)[1] == []


def test_the_format_is_described_field_by_field(schema: dict[str, Any]) -> None:
    """Every key of the format has a description, taken from the docstring under its field."""
    objects = [schema, *(d for name, d in schema["$defs"].items() if not name.startswith("check"))]
    for described in objects:
        for key, prop in described["properties"].items():
            assert prop.get("description"), f"{described['title']}.{key}"
    assert schema["properties"]["weight"]["maximum"] == MAX_WEIGHT == 1_000_000
    assert schema["$defs"]["check-not_empty"]["properties"]["weight"]["maximum"] == MAX_WEIGHT


def test_the_model_alone_gives_the_schema_of_the_format() -> None:
    """Without check types, a check is a type name, a weight, and any parameters."""
    schema = TestFile.model_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert errors(validator, OK) == errors(validator, CHAIN) == []
    assert errors(validator, mutated(OK, "checks.0", {"type": "no_such_type", "x": 1})) == []
    assert errors(validator, mutated(OK, "checks.0", {"type": "not_empty", "weight": 0}))


def mutated(document: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of ``document`` with ``value`` set at a dotted path (``None`` as value deletes)."""
    result = copy.deepcopy(document)
    *parents, last = path.split(".")
    target: Any = result
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    key: Any = int(last) if last.isdigit() else last
    if value is None:
        del target[key]
    else:
        target[key] = value
    return result


@pytest.mark.parametrize(
    ("document", "why"),
    [
        (mutated(OK, "checks.0.type", "tool_caled"), "unknown check type"),
        (mutated(OK, "checks.0.vaule", 3), "unknown key in a check"),
        (mutated(OK, "promt", "typo"), "unknown top-level key"),
        (mutated(CHAIN, "steps.0.extra", 1), "unknown key in a step"),
        (mutated(OK, "checks", []), "empty checks"),
        (mutated(OK, "checks.0", {"type": "word_count"}), "missing value"),
        (mutated(OK, "checks.0", {"type": "word_count", "value": "8"}), "value of the wrong type"),
        (mutated(OK, "checks.0", {"type": "word_count", "value": -1}), "negative count"),
        (mutated(OK, "checks.0", {"type": "tool_arg_equals", "value": 1}), "missing arg"),
        (mutated(OK, "checks.0", {"type": "tool_arg_equals", "arg": "", "value": 1}), "empty arg"),
        (mutated(OK, "checks.0", {"type": "regex", "value": "a", "flags": "x"}), "unknown regex flag"),
        (mutated(OK, "checks.0", {"type": "contains", "value": "a", "flags": "m"}), "flags not allowed"),
        (mutated(OK, "checks.0", {"type": "json_path_type", "path": "a", "value": "float"}), "unknown type"),
        (mutated(OK, "checks.0", {"type": "not_empty", "weight": 0}), "zero weight"),
        (mutated(OK, "checks.0", {"type": "not_empty", "weight": 1e308}), "huge check weight"),
        (mutated(OK, "weight", -1), "negative test weight"),
        (mutated(OK, "weight", 1e308), "huge test weight"),
        (mutated(OK, "weight", True), "boolean test weight"),
        (mutated(OK, "category", "tools"), "unknown category"),
        (mutated(OK, "name", ""), "empty name"),
        (mutated(OK, "name", None), "missing name"),
        (mutated(OK, "steps", CHAIN["steps"]), "both forms"),
        (mutated(CHAIN, "prompt", "also"), "steps with a prompt"),
        (mutated(OK, "checks", None), "prompt without checks"),
        (mutated(CHAIN, "steps.0.prompt", None), "first step without prompt"),
        (mutated(CHAIN, "steps.1.toolResult", None), "step without prompt or toolResult"),
        (mutated(CHAIN, "steps", []), "no steps"),
        (mutated(OK, "tools", [{"type": "function", "function": {"description": "no name"}}]), "tool without name"),
        (mutated(OK, "tools", [{"type": "web", "function": {"name": "x"}}]), "tool of another type"),
        (mutated(OK, "tools", [{"type": "function", "function": {"name": "x"}, "requiredTier": "huge"}]), "tier"),
        ([OK], "top-level array"),
        (mutated(OK, "tools", [{"type": "function", "function": {"name": "x", "parameters": None}}]), "null params"),
        ({**OK, "system": None}, "null system"),
        (mutated(CHAIN, "steps.1.toolResult", 3), "tool result not a string"),
    ],
)
def test_invalid_documents_fail(
    validator: jsonschema.Draft202012Validator, registry: Registry, document: Any, why: str
) -> None:
    assert errors(validator, document), why
    assert parse_test("t.json", document, registry)[1], f"the loader accepts what the schema refuses: {why}"


def test_optional_fields_validate(validator: jsonschema.Draft202012Validator, registry: Registry) -> None:
    tool = {
        "type": "function",
        "requiredTier": "medium",
        "function": {"name": "x", "description": "d", "parameters": {"type": "object"}},
    }
    document = {**OK, "description": "d", "weight": 2.5, "system": "Be brief.", "tools": [tool]}
    checks = [
        {"type": "tool_not_called"},
        {"type": "tool_not_called", "value": "x"},
        {"type": "contains", "value": "a", "flags": ""},
        {"type": "first_word", "value": "A", "flags": "i"},
        {"type": "regex", "value": "a", "flags": "imsgu", "weight": 0.5},
        {"type": "json_path_equals", "path": "a", "value": {"nested": [1, None]}},
        {"type": "tool_arg_regex", "arg": "file-name", "value": "x"},
    ]
    assert errors(validator, {**document, "checks": checks}) == []
    assert parse_test("t.json", {**document, "checks": checks}, registry)[1] == []


class _Options(tsuka_core.CheckParams):
    """Options with a nested model."""

    mode: _Mode


class _Mode(tsuka_core.CheckParams):
    """A nested model."""

    level: int


class _Nested(tsuka_core.CheckType[_Options]):
    """Pass when a nested option is set."""

    name = "nested_option"
    params_model = _Options


_Options.model_rebuild()


def test_nested_params_models_are_moved_into_the_shared_defs() -> None:
    class Plugin:
        @tsuka_core.hookimpl
        def register_check_types(self, register: tsuka_core.RegisterCheckType) -> None:
            register(_Nested)

    registry = Registry.from_plugins([LoadedPlugin("main", "tsuka-nested", "1.0", Plugin())])
    schema = suite_schema(registry)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    good = {**OK, "checks": [{"type": "nested_option", "mode": {"level": 3}}]}
    bad = {**OK, "checks": [{"type": "nested_option", "mode": {"level": "high"}}]}
    assert errors(validator, good) == []
    assert errors(validator, bad)
    assert "check-nested_option-_Mode" in schema["$defs"]


def test_check_schema_of_one_type(registry: Registry) -> None:
    word_count = registry.check_type("word_count")
    assert word_count is not None
    definition, nested = check_schema("word_count", word_count)
    assert nested == {}
    assert definition["title"] == "word_count"
    assert list(definition["properties"]) == ["type", "weight", "value", "min", "max", "words"]
