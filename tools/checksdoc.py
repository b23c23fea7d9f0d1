"""Render the check-type reference (``docs/checks.md``) from the check types a registry holds.

Regenerate the page for the built-in check types with::

    python tools/checksdoc.py > docs/checks.md
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError
from pydantic.errors import PydanticUserError

from tsuka_core.judge.checks import CheckType, describe
from tsuka_core.plugins.manager import BUILTIN_DISTRIBUTION
from tsuka_core.plugins.registry import Registered, Registry, load_registry

__all__ = ["REGENERATE", "builtin_only", "check_example", "checks_markdown", "main"]

REGENERATE = "python tools/checksdoc.py > docs/checks.md"
"""The command that rewrites ``docs/checks.md``."""

Schema = dict[str, Any]


def _is_builtin_distribution(name: str) -> bool:
    return name.lower().replace("_", "-") == BUILTIN_DISTRIBUTION


def _is_builtin(entry: Registered[Any]) -> bool:
    return _is_builtin_distribution(entry.distribution)


def builtin_only(registry: Registry) -> Registry:
    """A copy of ``registry`` holding only what the built-in distribution (``tsuka``) registered."""
    return Registry(
        plugins=[p for p in registry.plugins if _is_builtin_distribution(p.distribution)],
        check_types={n: e for n, e in registry.check_types.items() if _is_builtin(e)},
        backends={n: e for n, e in registry.backends.items() if _is_builtin(e)},
    )


# --- parameter table ------------------------------------------------------------------------------------------------


def _params_schema(check_type: type[CheckType[Any]]) -> Schema:
    """The JSON Schema of a check type's parameters; empty when pydantic cannot describe them."""
    try:
        return check_type.params_model.model_json_schema()
    except PydanticUserError:
        return {}


_BOUNDS = (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<"))


def _cell(text: str) -> str:
    """Text fit for one Markdown table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _json_type(spec: Schema) -> str:
    """A property's JSON type in words: ``string``, ``integer ≥ 0``, ``string or null``, ``any JSON value``."""
    if "const" in spec:
        return f"`{json.dumps(spec['const'], ensure_ascii=False)}`"
    if "enum" in spec:
        return "one of " + ", ".join(f"`{json.dumps(v, ensure_ascii=False)}`" for v in spec["enum"])
    branches = spec.get("anyOf") or spec.get("oneOf")
    if isinstance(branches, list):
        return " or ".join(_json_type(branch) for branch in branches)
    kind = spec.get("type")
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    if kind is None:
        return "object" if "$ref" in spec else "any JSON value"
    if kind == "array" and isinstance(spec.get("items"), dict):
        return f"array of {_json_type(spec['items'])}"
    bounds = ", ".join(f"{sign} {spec[key]}" for key, sign in _BOUNDS if key in spec)
    return f"{kind} {bounds}" if bounds else str(kind)


def _need(key: str, spec: Schema, required: set[str]) -> str:
    if key in required:
        return "required"
    if "default" in spec:
        return f"default `{json.dumps(spec['default'], ensure_ascii=False)}`"
    return "optional"


def _parameter_table(schema: Schema) -> list[str]:
    properties: Mapping[str, Schema] = schema.get("properties", {})
    if not properties:
        return ["No parameters besides `type` and `weight`."]
    required = set(schema.get("required", []))
    lines = ["| parameter | JSON type | required | description |", "|---|---|---|---|"]
    for key, spec in properties.items():
        description = _cell(str(spec.get("description", "")))
        lines.append(f"| `{key}` | {_cell(_json_type(spec))} | {_need(key, spec, required)} | {description} |")
    return lines


# --- example --------------------------------------------------------------------------------------------------------


def _sample(spec: Schema) -> Any:
    """A value that satisfies a simple property schema (for types that give no example)."""
    if "const" in spec:
        return spec["const"]
    if spec.get("enum"):
        return spec["enum"][0]
    branches = spec.get("anyOf") or spec.get("oneOf")
    if isinstance(branches, list) and branches:
        usable = [b for b in branches if b.get("type") != "null"] or branches
        return _sample(usable[0])
    kind = spec.get("type")
    if kind in ("integer", "number"):
        low = spec.get("minimum")
        if low is None and "exclusiveMinimum" in spec:
            low = spec["exclusiveMinimum"] + 1
        value = max(1, low if low is not None else 1)
        return int(value) if kind == "integer" else float(value)
    samples: dict[Any, Any] = {"boolean": True, "array": [], "object": {}, "null": None}
    return samples.get(kind, "example")


def _synthesised(schema: Schema) -> dict[str, Any]:
    properties: Mapping[str, Schema] = schema.get("properties", {})
    return {key: _sample(properties[key]) for key in schema.get("required", []) if key in properties}


def _validates(check_type: type[CheckType[Any]], example: Mapping[str, Any]) -> str | None:
    """``None`` when ``example`` (without ``type``/``weight``) validates, else pydantic's reason on one line."""
    fields = {k: v for k, v in example.items() if k not in ("type", "weight")}
    weight = example.get("weight", 1)
    if isinstance(weight, bool) or not isinstance(weight, int | float) or weight <= 0:
        return f"weight must be a number > 0, got {weight!r}"
    try:
        check_type.params_model.model_validate(fields)
    except (ValidationError, ValueError) as exc:
        return " ".join(str(exc).split())
    return None


def check_example(name: str, entry: Registered[type[CheckType[Any]]]) -> dict[str, Any]:
    """One check of type ``name`` that validates: the class's ``example``, or one built from its parameters' schema.

    Raises ValueError when the class's own ``example`` does not validate, or no valid example can be built.
    """
    check_type = entry.cls
    own: object = check_type.example
    if own is not None and not isinstance(own, Mapping):
        raise ValueError(f"check type {name!r}: its example must be a dict, not {type(own).__name__}")
    candidate: Mapping[str, Any] = own if own is not None else _synthesised(_params_schema(check_type))
    example = {"type": name, **{k: v for k, v in candidate.items() if k != "type"}}
    problem = _validates(check_type, example)
    if problem:
        raise ValueError(f"check type {name!r}: the example {json.dumps(example)} does not validate: {problem}")
    return example


# --- the page -------------------------------------------------------------------------------------------------------


def _intro(registry: Registry) -> list[str]:
    names = sorted(registry.check_types)
    lines = [
        "# Check types",
        "",
        f"<!-- Generated from the installed check types; do not edit. Regenerate: {REGENERATE} -->",
        "",
        "This page is generated from the check types themselves, so it cannot drift from the code.",
        f"Regenerate it with `{REGENERATE}`; `tsuka checks` lists the check types installed",
        "on your machine (plugins included) and `tsuka checks show NAME` prints one of them.",
        "",
        "A check is one object in a step's `checks` list. Besides the parameters listed for its type,",
        "every check has `type` (the name of its check type) and may have `weight` (a number > 0,",
        "default 1). Any other key, a value of the wrong JSON type, a regular expression that does not",
        "compile or a path that does not parse is reported when the suite loads, and the suite does not run.",
        "How each check is judged, and what the answer text is, is described in [contract.md](contract.md).",
        "",
        "| check type | provided by | description |",
        "|---|---|---|",
    ]
    for name in names:
        entry = registry.check_types[name]
        lines.append(f"| [`{name}`](#{name}) | {entry.distribution} | {_cell(describe(entry.cls))} |")
    return lines


def _section(name: str, entry: Registered[type[CheckType[Any]]]) -> list[str]:
    schema = _params_schema(entry.cls)
    example = json.dumps(check_example(name, entry), ensure_ascii=False)
    return [
        f"## `{name}`",
        "",
        f"Provided by `{entry.distribution}`.",
        "",
        describe(entry.cls),
        "",
        *_parameter_table(schema),
        "",
        "Example:",
        "",
        "```json",
        example,
        "```",
    ]


def checks_markdown(registry: Registry) -> str:
    """The check-type reference as Markdown: an index, then one section per check type, sorted by name."""
    lines = _intro(registry)
    for name in sorted(registry.check_types):
        lines += ["", *_section(name, registry.check_types[name])]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Write the reference of the built-in check types to standard output, as UTF-8."""
    text = checks_markdown(builtin_only(load_registry()))
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
