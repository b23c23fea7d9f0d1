"""BFCL's function descriptions as the tools its OpenAI-compatible function-calling handler sends, to the letter.

First the hints BFCL's generation adds (``hinted``): every description ends with
the language the function is written in ("Note that the provided function is
in Python 3 syntax."), and a Java or JavaScript parameter becomes a ``string``
whose description says which type it is in string representation (its items'
type, its object's schema, said in words). Then BFCL's conversion: a name's
dots become underscores (OpenAI's names take none); ``parameters`` becomes an
``object``; each parameter's BFCL type becomes its OpenAPI type
(``dict`` -> ``object``, ``float`` -> ``number`` with ``format: float`` and
"This is a float type value." added to its description, ``tuple`` -> ``array``,
``any`` and any unknown type -> ``string``, Java's ``long`` -> ``integer``...),
into object properties and array items as BFCL converts them (two levels of
items, items' object properties).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["OPENAPI_TYPES", "hinted", "schema_of", "tool_name", "tool_of"]

OPENAPI_TYPES: Mapping[str, str] = {
    "integer": "integer", "number": "number", "float": "number", "string": "string", "boolean": "boolean",
    "bool": "boolean", "array": "array", "list": "array", "dict": "object", "object": "object",
    "tuple": "array", "any": "string", "byte": "integer", "short": "integer", "long": "integer",
    "double": "number", "char": "string", "ArrayList": "array", "Array": "array", "HashMap": "object",
    "Hashtable": "object", "Queue": "array", "Stack": "array", "Any": "string", "String": "string",
    "Bigint": "integer",
}  # fmt: skip
"""BFCL's type names and the OpenAPI type its handler sends for each."""


def tool_name(name: str) -> str:
    """A BFCL function name as the tool is named: ``math.factorial`` -> ``math_factorial``."""
    return name.replace(".", "_")


_LANGUAGE_HINTS = {
    "python": " Note that the provided function is in Python 3 syntax.",
    "java": " Note that the provided function is in Java 8 SDK syntax.",
    "javascript": " Note that the provided function is in JavaScript syntax.",
}
_LANGUAGE_NAMES = {"java": "Java", "javascript": "JavaScript"}


def hinted(function: Mapping[str, Any], language: str, hint: bool = True) -> dict[str, Any]:
    """The function description as BFCL's generation sends it: language hints added (unless not ``hint``: a
    multi-turn function BFCL holds back is revealed without one), Java and JavaScript parameters made strings
    (a copy)."""
    item = copy.deepcopy(dict(function))
    if hint:
        item["description"] = f"{item.get('description', '')}{_LANGUAGE_HINTS[language]}"
    if language in _LANGUAGE_NAMES:
        properties = item.get("parameters", {}).get("properties", {})
        for value in properties.values():
            _as_source_text(value, _LANGUAGE_NAMES[language])
    return item


def _as_source_text(value: dict[str, Any], name: str) -> None:
    kind = value.get("type")
    said = value.get("description", "")
    if kind == "any":
        said += f" This parameter can be of any type of {name} object in string representation."
    else:
        said += f" This is {name} {kind} type parameter in string representation."
    if kind in (("ArrayList", "Array") if name == "Java" else ("array",)):
        said += f" The list elements are of type {value['items']['type']}; they are not in string representation."
        del value["items"]
    if name == "JavaScript" and kind == "dict" and "properties" in value:
        schema = json.dumps(value["properties"])
        said += f" The dictionary entries have the following schema; they are not in string representation. {schema}"
        del value["properties"]
    value["description"] = said
    value["type"] = "string"


def tool_of(function: Mapping[str, Any], language: str = "python", hint: bool = True) -> dict[str, Any]:
    """One BFCL function description as the OpenAI tool BFCL's function-calling handler sends for ``language``."""
    item = hinted(function, language, hint)
    item["name"] = tool_name(str(item["name"]))
    parameters = item.setdefault("parameters", {})
    parameters["type"] = "object"
    parameters["properties"] = schema_of(parameters.get("properties", {}))
    return {"type": "function", "function": item}


def schema_of(properties: Mapping[str, Any]) -> dict[str, Any]:
    """The ``properties`` of a BFCL parameter object with each type converted (a copy)."""
    converted: dict[str, Any] = {}
    for key, value in properties.items():
        schema = copy.deepcopy(dict(value)) if isinstance(value, Mapping) else {}
        converted[key] = _converted(schema)
    return converted


def _converted(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if kind is None:
        schema["type"] = "string"
    else:
        if kind == "float":
            schema["format"] = "float"
            schema["description"] = f"{schema.get('description', '')} This is a float type value."
        schema["type"] = OPENAPI_TYPES.get(kind, "string") if isinstance(kind, str) else "string"
    if schema["type"] in ("array", "object"):
        if isinstance(schema.get("properties"), Mapping):
            schema["properties"] = schema_of(schema["properties"])
        elif isinstance(schema.get("items"), Mapping):
            _items(schema["items"])
    return schema


def _items(items: dict[str, Any]) -> None:
    """An array's items, as BFCL converts them: their type, then one more level of items or their properties."""
    kind = items.get("type")
    items["type"] = OPENAPI_TYPES.get(kind, kind) if isinstance(kind, str) else kind
    inner = items.get("items")
    if items["type"] == "array" and isinstance(inner, Mapping) and isinstance(inner.get("type"), str):
        inner["type"] = OPENAPI_TYPES.get(inner["type"], inner["type"])  # type: ignore[index]
    elif items["type"] == "object" and isinstance(items.get("properties"), Mapping):
        items["properties"] = schema_of(items["properties"])
