"""Whether one argument of a tool call holds an accepted value: its type first, then its value, as BFCL judges.

The type the tool declares comes first: a value of another type is right only
when it is of the very type of the test's accepted values (BFCL's "variable":
the name of a variable written where a value was wanted), and it is then
compared as written. A number declared takes a whole number (``5`` reads as
``5.0``); an array's items are held to the item type, against the accepted
arrays. Values are compared as JSON values; with ``normalize``, strings are
compared as BFCL compares them, and only where it compares them so: a string
argument, the strings directly in an array argument, the string values of an
object argument (an object's keys, and anything deeper, as written).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tsuka_core import json_equal

__all__ = ["Declared", "argument_misfit", "declared_of", "standardized"]

_PYTHON = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list, "object": dict}
"""A JSON kind as the Python type BFCL's checker holds a value to."""
_STRIPPED = re.compile(r"[ ,./\-_*^]")


@dataclass(frozen=True)
class Declared:
    """The JSON kind of an argument (None: any), and of its items when it is an array."""

    kind: str | None
    items: str | None = None


def declared_of(schema: object) -> Declared:
    """The kind a JSON Schema declares (its first known ``type``), and its ``items``' for an array."""
    kind = _first_kind(schema)
    items = schema.get("items") if isinstance(schema, Mapping) and kind == "array" else None
    return Declared(kind, _first_kind(items))


def _first_kind(schema: object) -> str | None:
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
    return next((k for k in kinds if isinstance(k, str) and k in _PYTHON), None)


def standardized(text: str) -> str:
    """A string as BFCL compares it: without spaces or ``,./-_*^``, lower-cased, ``'`` read as ``"``."""
    return _STRIPPED.sub("", text).lower().replace("'", '"')


def argument_misfit(
    value: Any, accepted: Sequence[Any], declared: Declared, *, normalize: bool, optional: bool = False
) -> str | None:
    """Why ``value`` is not one of ``accepted`` for an argument declared as ``declared`` (``""``: it is of the
    right type, not an accepted value); None when it is.

    ``optional``: the argument may be absent, which (as in BFCL, whose "absent" marker is no array) waives the
    item check of an array.
    """
    python = _PYTHON.get(declared.kind or "")
    if python is float and type(value) is int:
        value = float(value)
    if python is None:
        return None if any(json_equal(value, a) for a in accepted) else ""
    wanted = next((type(a) for a in accepted if a != ""), None)
    variable = wanted is not None and wanted is not python
    if type(value) is python:
        if (
            declared.items
            and isinstance(value, list)
            and not optional
            and not _items_fit(value, accepted, declared.items)
        ):
            return f"has an item that is not {declared.items}"
    elif wanted is not None and type(value) is wanted:
        variable = True
    else:
        return f"{_kind(value)} where the tool declares {declared.kind}"
    if variable or not normalize:
        return None if any(json_equal(value, a) for a in accepted) else ""
    return None if _fits_as_bfcl(value, accepted, python, declared.items) else ""


def _items_fit(value: list[Any], accepted: Sequence[Any], items: str) -> bool:
    """BFCL's item check: against some accepted array, every item of ``value`` is of the item type or, a
    variable, of the type of that array's first item; an accepted value that is no array waives it."""
    python = _PYTHON.get(items)
    if python is None:
        return True
    for possible in accepted:
        if not isinstance(possible, list):
            return True
        wanted = next((type(a) for a in possible if a != ""), None)
        if all(type(v) is python or (wanted is not None and type(v) is wanted) for v in value):
            return True
    return False


def _fits_as_bfcl(value: Any, accepted: Sequence[Any], python: type, items: str | None) -> bool:
    if python is dict:
        return any(_dict_fits(value, a) for a in accepted if isinstance(a, dict))
    if python is list and items == "object":
        return any(isinstance(a, list) and _dicts_fit(value, a) for a in accepted)
    if python is str:
        return standardized(value) in [standardized(a) for a in accepted if isinstance(a, str)]
    if python is list:
        seen = [standardized(v) if isinstance(v, str) else v for v in value]
        return any(json_equal(seen, _standardized_items(a)) for a in accepted)
    return any(json_equal(value, a) for a in accepted)


def _dicts_fit(value: list[Any], possible: list[Any]) -> bool:
    """BFCL's array-of-objects check: as many objects as accepted, each fitting the accepted one at its place."""
    return len(value) == len(possible) and all(_dict_fits(v, d) for v, d in zip(value, possible, strict=True))


def _standardized_items(possible: Any) -> list[Any]:
    """An accepted array as BFCL standardises it; a string accepted for an array reads as its characters."""
    if isinstance(possible, str):
        return [standardized(char) for char in possible]
    if isinstance(possible, list):
        return [standardized(v) if isinstance(v, str) else v for v in possible]
    return [possible]


def _dict_fits(value: Any, possible: Mapping[str, Any]) -> bool:
    """BFCL's object check against one accepted object: the same keys, each string value standardised."""
    if not isinstance(value, dict) or value.keys() != possible.keys():
        return False
    return all(
        standardized(v) == standardized(p) if isinstance(v, str) and isinstance(p, str) else json_equal(v, p)
        for v, p in ((value[k], possible[k]) for k in value)
    )


def _kind(value: Any) -> str:
    return type(value).__name__ if value is not None else "null"
