"""JSON Schema validators safe for a suite's schemas: nothing outside the schema, no search without a time limit.

A suite is data from anyone, and so is the schema of a tool it offers. A
validator from :func:`schema_validator` resolves a ``$ref`` only within the
schema itself (a URL or a file is never fetched or read: the reference is
unresolvable), searches ``pattern`` and ``patternProperties`` with the checks'
time-bounded matcher (:class:`~tsuka_core.judge.patterns.Pattern`), decides
``uniqueItems`` in linear time, and checks the formats it states, each refusing a
string longer than :data:`MAX_FORMAT_CHARS`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import SchemaError, ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import extend, validator_for
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource

from tsuka_core.judge.patterns import Pattern

__all__ = ["MAX_FORMAT_CHARS", "UNCHECKED_FORMATS", "schema_validator"]

MAX_FORMAT_CHARS = 8192
"""A string longer than this never conforms to a format the schema states (no date, address or URI is that long,
and some format checks take time that grows faster than the text)."""
UNCHECKED_FORMATS = frozenset({"iri", "iri-reference"})
"""Formats never checked, whatever is installed (their checker is too slow on long text): they always conform."""


def _refuse(uri: str) -> Resource[Any]:
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # attrs-made __init__


_WITHIN: Registry[Any] = Registry(retrieve=_refuse)  # type: ignore[call-arg]  # attrs-made __init__
"""The registry a schema is resolved in: references within the schema itself, nothing else."""


@lru_cache(maxsize=256)
def _pattern(source: str) -> Pattern:
    try:
        return Pattern.compile(source)
    except ValueError as exc:
        raise SchemaError(f"pattern {source[:60]!r}: {exc}") from None


def _bounded_pattern(validator: Any, source: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """``pattern`` through the time-bounded matcher (PatternTimeout past its limit, never a hang)."""
    del schema
    if validator.is_type(instance, "string") and not _pattern(source).search(instance):
        yield ValidationError(f"{instance!r} does not match {source!r}")


def _bounded_pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    """``patternProperties`` through the same matcher."""
    del schema
    if not validator.is_type(instance, "object"):
        return
    for source, subschema in patterns.items():
        for key, value in instance.items():
            if _pattern(source).search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=source)


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """``uniqueItems`` in linear time: each item's canonical JSON, ``1`` and ``1.0`` alike, ``true`` apart."""
    del schema
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[str] = set()
    for item in instance:
        key = json.dumps(_canonical(item), sort_keys=True)
        if key in seen:
            yield ValidationError(f"{json.dumps(item)[:60]} is not unique in the array")
            return
        seen.add(key)


def _canonical(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    return value


def _whole_number(checker: Any, instance: Any) -> bool:
    """JSON Schema's ``integer`` without the float ``5.0`` that drafts 6 and later admit (BFCL refuses it)."""
    del checker
    return isinstance(instance, int) and not isinstance(instance, bool)


def _bounded_format(check: Callable[[object], Any]) -> Callable[[object], Any]:
    def bounded(instance: object) -> Any:
        return not (isinstance(instance, str) and len(instance) > MAX_FORMAT_CHARS) and check(instance)

    return bounded


def _formats() -> FormatChecker:
    """Draft 2020-12's format checks (date, date-time, time, duration, email, hostname, ipv4, ipv6, uri,
    uri-reference, uri-template, json-pointer, uuid, regex...), each refusing a string over the bound."""
    checker = FormatChecker(formats=())
    for name, (check, raises) in Draft202012Validator.FORMAT_CHECKER.checkers.items():
        if name not in UNCHECKED_FORMATS:
            checker.checks(name, raises)(_bounded_format(check))
    return checker


_FORMATS = _formats()
_BOUNDED = {"pattern": _bounded_pattern, "patternProperties": _bounded_pattern_properties, "uniqueItems": _unique_items}


@lru_cache(maxsize=16)
def _bounded_class(draft: type[Validator], strict_integer: bool) -> type[Validator]:
    types = draft.TYPE_CHECKER.redefine("integer", _whole_number) if strict_integer else draft.TYPE_CHECKER
    cls: type[Validator] = extend(draft, validators=_BOUNDED, type_checker=types)  # type: ignore[no-untyped-call]
    return cls


def schema_validator(schema: Mapping[str, Any], *, strict_integer: bool = False) -> Validator:
    """A validator of ``schema`` (the draft its ``$schema`` names, else 2020-12) safe for a suite's data.

    ``$ref`` resolves within the schema only, patterns are searched with a time limit (a search past it raises
    :class:`~tsuka_core.PatternTimeout`), formats are checked (a string over :data:`MAX_FORMAT_CHARS` conforms to
    none; ``iri`` is not checked). ``strict_integer`` refuses ``5.0`` as an integer. Raises
    ``jsonschema.exceptions.SchemaError`` when ``schema`` is not a valid schema of its draft.
    """
    named = schema.get("$schema")
    draft = validator_for(schema, default=Draft202012Validator) if isinstance(named, str) else Draft202012Validator
    cls = _bounded_class(draft, strict_integer)
    document = dict(schema)
    cls.check_schema(document)
    validator: Validator = cls(document, registry=_WITHIN, format_checker=_FORMATS)
    return validator
