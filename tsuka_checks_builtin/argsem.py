"""What an argument of a tool call means: its type as the tool declares it, accepted values, normalised strings.

The rules are those of BFCL's AST checker where it is right: a parameter the
tool declares ``integer`` refuses ``5.0`` (and ``true``), one declared
``number`` takes ``5``; a string may be compared normalised as BFCL does
(spaces and ``,./-_*^`` removed, case folded, ``'`` read as ``"``), when the
test asks for it; an argument the tool does not declare is never right.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tsuka_core import json_equal

__all__ = ["declared", "normalised", "offered", "required", "same_kind", "type_problem", "value_fits"]

_KINDS: Mapping[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}
_STRIPPED = re.compile(r"[ ,./\-_*^]")


def offered(tools: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any] | None:
    """The ``function`` of the offered tool ``name`` (OpenAI format, or the bare function); None when not offered."""
    for tool in tools:
        function = tool.get("function", tool)
        if isinstance(function, Mapping) and function.get("name") == name:
            return function
    return None


def _parameters(tools: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any] | None:
    function = offered(tools, name)
    parameters = function.get("parameters") if function is not None else None
    return parameters if isinstance(parameters, Mapping) else None


def declared(tools: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any] | None:
    """The ``properties`` the offered tool ``name`` declares; None when it is not offered or declares none."""
    parameters = _parameters(tools, name)
    properties = parameters.get("properties") if parameters is not None else None
    return properties if isinstance(properties, Mapping) else None


def required(tools: Sequence[Mapping[str, Any]], name: str) -> list[str]:
    """The arguments the offered tool ``name`` requires (its schema's ``required``); none when it names none."""
    parameters = _parameters(tools, name)
    names = parameters.get("required") if parameters is not None else None
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def same_kind(value: Any, other: Any) -> bool:
    """Whether two JSON values are of one JSON type all through (``5`` and ``5.0`` are not, nor ``[5]`` and
    ``[5.0]``; ``true`` is no number)."""
    if type(value) is not type(other):
        return False
    if isinstance(value, list):
        return len(value) == len(other) and all(same_kind(a, b) for a, b in zip(value, other, strict=True))
    if isinstance(value, dict):
        return value.keys() == other.keys() and all(same_kind(value[k], other[k]) for k in value)
    return True


def _types(schema: object) -> list[str]:
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    if isinstance(kind, str):
        return [kind]
    return [k for k in kind if isinstance(k, str)] if isinstance(kind, list) else []


def type_problem(value: Any, schema: object) -> str | None:
    """Why ``value`` is not of the type ``schema`` declares (``5.0`` for an integer, ``true`` for a number); None.

    An array's items are held to the type its ``items`` declare, as BFCL's checker holds them.
    """
    kinds = [k for k in _types(schema) if k in _KINDS]
    if not kinds:
        return None  # no type declared, or one this does not know: anything goes
    for kind in kinds:
        if isinstance(value, bool) and kind != "boolean":
            continue
        if isinstance(value, _KINDS[kind]):
            elements: list[Any] = value if isinstance(value, list) else []
            items = schema.get("items") if isinstance(schema, Mapping) else None
            inner = next((p for v in elements if (p := type_problem(v, items))), None)
            return f"an item is {inner}" if inner else None
    return f"{type(value).__name__ if value is not None else 'null'} where the tool declares {'/'.join(kinds)}"


def normalised(value: Any) -> Any:
    """``value`` with every string, however deep, normalised as BFCL compares them."""
    if isinstance(value, str):
        return _STRIPPED.sub("", value).lower().replace("'", '"')
    if isinstance(value, list):
        return [normalised(v) for v in value]
    if isinstance(value, dict):
        return {k: normalised(v) for k, v in value.items()}
    return value


def value_fits(value: Any, accepted: Iterable[Any], *, normalise: bool = False) -> bool:
    """Whether ``value`` equals one of ``accepted`` (JSON-typed; strings normalised when ``normalise``)."""
    seen = normalised(value) if normalise else value
    return any(json_equal(seen, normalised(a) if normalise else a) for a in accepted)
