"""The JSON Schema (draft 2020-12) of one test file: the test-file model's, with the check types a registry holds."""

from __future__ import annotations

import functools
import re
from typing import Any

from pydantic.errors import PydanticUserError
from pydantic.json_schema import GenerateJsonSchema

from tsuka_core.judge.checks import ArgParams, CheckType, RegexParams, describe
from tsuka_core.judge.patterns import KNOWN_FLAGS
from tsuka_core.plugins.registry import Registry
from tsuka_core.suite.testfile import Check, TestFile

__all__ = ["SCHEMA_DIALECT", "SCHEMA_ID", "check_schema", "suite_schema"]

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "urn:tsuka:schema:test-file"
"""The schema's ``$id``: a name, not a download address."""

Schema = dict[str, Any]


class _Names(GenerateJsonSchema):
    """Definitions named as the format names them: ``step``, ``tool-function``, ``check``."""

    def normalize_name(self, name: str) -> str:
        return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", super().normalize_name(name)).lower()


@functools.cache
def _weight() -> Schema:
    """The schema of a check's ``weight``, as the check model declares it."""
    weight: Schema = Check.model_json_schema()["properties"]["weight"]
    return weight


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
        "weight": _weight(),
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
    for key in ("anyOf", "oneOf", "allOf", "not", "dependentRequired"):  # a params model's own rules across keys
        if key in params:
            schema[key] = params[key]
    return schema, nested


def suite_schema(registry: Registry) -> dict[str, Any]:
    """The JSON Schema of one test file: the test-file model's, with one ``check`` branch per check type."""
    schema = TestFile.model_json_schema(schema_generator=_Names)
    defs: dict[str, Schema] = schema.pop("$defs")
    names = sorted(registry.check_types)
    defs["check"] = {
        "oneOf": [{"$ref": f"#/$defs/check-{name}"} for name in names],
        "description": defs["check"]["description"],
    }
    for name in names:
        definition, nested = check_schema(name, registry.check_types[name].cls)
        defs[f"check-{name}"] = definition
        defs.update(nested)
    return {"$schema": SCHEMA_DIALECT, "$id": SCHEMA_ID, **schema, "$defs": defs}
