"""The JSON Schema (draft 2020-12) of one test file, built from the check types a registry holds."""

from __future__ import annotations

from typing import Any

from pydantic.errors import PydanticUserError

from tsuka_core.judge.checks import ArgParams, CheckType, RegexParams, describe
from tsuka_core.judge.patterns import KNOWN_FLAGS
from tsuka_core.plugins.registry import Registry
from tsuka_core.terms import CATEGORIES, TIERS

__all__ = ["SCHEMA_DIALECT", "SCHEMA_ID", "check_schema", "suite_schema"]

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "urn:tsuka:schema:test-file"
"""The schema's ``$id``: a name, not a download address."""

Schema = dict[str, Any]


def _ref(name: str) -> Schema:
    return {"$ref": f"#/$defs/{name}"}


def _weight(what: str) -> Schema:
    return {"type": "number", "exclusiveMinimum": 0, "default": 1, "description": f"Weight of the {what} (> 0)."}


def _tool() -> Schema:
    tier: Schema = {"enum": list(TIERS), "description": "Lowest tier that may see the tool; the benchmark ignores it."}
    function: Schema = {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "description": {"type": "string"},
            "parameters": {"type": "object", "description": "A JSON Schema for the arguments."},
            "requiredTier": tier,
        },
    }
    return {
        "type": "object",
        "description": "An OpenAI function schema, offered on every step.",
        "required": ["type", "function"],
        "properties": {"type": {"const": "function"}, "function": function, "requiredTier": tier},
    }


def _step() -> Schema:
    return {
        "type": "object",
        "description": "One request: a prompt and/or the result of the previous step's first tool call, and checks.",
        "properties": {
            "prompt": {"type": "string", "description": "Sent as a user message."},
            "toolResult": {"type": "string", "description": "Sent back as the result of the previous first call."},
            "checks": _ref("checks"),
        },
        "required": ["checks"],
        "anyOf": [{"required": ["prompt"]}, {"required": ["toolResult"]}],
        "additionalProperties": False,
    }


def _params_schema(name: str, check_type: type[CheckType[Any]]) -> tuple[Schema, dict[str, Schema]]:
    """The params model's JSON Schema, its nested definitions renamed into the shared ``$defs``."""
    model = check_type.params_model
    try:
        schema = model.model_json_schema(ref_template=f"#/$defs/check-{name}-{{model}}")
    except PydanticUserError:  # parameters pydantic cannot describe: accept any keys for this type
        return {"properties": {}, "additionalProperties": True}, {}
    nested = {f"check-{name}-{key}": value for key, value in schema.pop("$defs", {}).items()}
    properties: Schema = dict(schema.get("properties", {}))
    if issubclass(model, RegexParams) and "flags" in properties:
        properties["flags"] = {**properties["flags"], "pattern": f"^[{KNOWN_FLAGS}]*$"}
    if issubclass(model, ArgParams) and "arg" in properties:
        properties["arg"] = {**properties["arg"], "minLength": 1}
    schema["properties"] = properties
    return schema, nested


def check_schema(name: str, check_type: type[CheckType[Any]]) -> tuple[Schema, dict[str, Schema]]:
    """The schema of one check of type ``name``, and any definitions it refers to."""
    params, nested = _params_schema(name, check_type)
    properties: Schema = {
        "type": {"const": name, "description": describe(check_type)},
        "weight": _ref("weight"),
        **params["properties"],
    }
    required = ["type", *(key for key in params.get("required", []) if key not in ("type", "weight"))]
    schema: Schema = {
        "type": "object",
        "title": name,
        "description": describe(check_type),
        "properties": properties,
        "required": required,
        "additionalProperties": params.get("additionalProperties", False),
    }
    return schema, nested


def _top_level() -> Schema:
    return {
        "name": {"type": "string", "pattern": "\\S", "description": "Unique in the suite."},
        "category": {"enum": list(CATEGORIES), "description": "The category the test scores in."},
        "description": {"type": "string", "description": "What the test measures (informational)."},
        "weight": _ref("weight"),
        "tools": {"type": "array", "items": _ref("tool"), "description": "Tools offered on every step."},
        "system": {"type": "string", "description": "A system message sent first."},
        "prompt": {"type": "string", "description": "Short form: the prompt of the only step."},
        "checks": _ref("checks"),
        "steps": {
            "type": "array",
            "minItems": 1,
            "prefixItems": [{"allOf": [_ref("step"), {"required": ["prompt"]}]}],
            "items": _ref("step"),
            "description": "Long form: the requests, in order; the first needs a prompt.",
        },
    }


def suite_schema(registry: Registry) -> dict[str, Any]:
    """The JSON Schema of one test file, with one ``checks`` branch per check type in ``registry``."""
    names = sorted(registry.check_types)
    defs: dict[str, Schema] = {
        "weight": _weight("test or check"),
        "tool": _tool(),
        "step": _step(),
        "checks": {"type": "array", "minItems": 1, "items": _ref("check"), "description": "Checks of one step."},
        "check": {"oneOf": [_ref(f"check-{name}") for name in names], "description": "One check; `type` selects it."},
    }
    for name in names:
        schema, nested = check_schema(name, registry.check_types[name].cls)
        defs[f"check-{name}"] = schema
        defs.update(nested)
    return {
        "$schema": SCHEMA_DIALECT,
        "$id": SCHEMA_ID,
        "title": "tsuka test file",
        "description": "One test of a tsuka suite: a prompt with checks (short form) or a list of steps.",
        "type": "object",
        "properties": _top_level(),
        "required": ["name", "category"],
        "oneOf": [
            {"required": ["prompt", "checks"], "properties": {"steps": False}},
            {"required": ["steps"], "properties": {"prompt": False, "checks": False}},
        ],
        "additionalProperties": False,
        "$defs": defs,
    }
