"""A check type that holds every tool call's arguments to the offered tool's own JSON Schema."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from jsonschema.exceptions import SchemaError, ValidationError
from referencing.exceptions import Unresolvable

from tsuka_checks_builtin.argsem import offered
from tsuka_checks_builtin.json import compact
from tsuka_core import Answer, CheckParams, CheckType, Outcome, ToolCall, schema_validator

__all__ = ["ToolArgsConform"]


class ConformParams(CheckParams):
    """Whether arguments the schema does not name are allowed."""

    undeclared: bool = False
    """False (the default): an argument the tool's schema does not declare fails, whatever the schema says of
    additionalProperties; true: the schema alone decides."""


def _schema(tools: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any] | None:
    """The offered tool's parameters schema (an object of anything when it gives none); None when not offered."""
    function = offered(tools, name)
    if function is None:
        return None
    parameters = function.get("parameters")
    return parameters if isinstance(parameters, Mapping) else {"type": "object"}


def _problem(call: ToolCall, tools: Sequence[Mapping[str, Any]], undeclared: bool) -> str | None:
    """Why ``call`` does not conform to its tool's schema, or None when it does."""
    if call.arguments_problem or call.repaired:
        return f"{call.name}: {call.arguments_problem or 'arguments were not valid JSON as written'}"
    schema = _schema(tools, call.name)
    if schema is None:
        return f"{call.name} is not a tool the request offered"
    if not undeclared and isinstance(schema.get("properties"), Mapping):
        extra = [k for k in call.arguments if k not in schema["properties"]] if isinstance(call.arguments, dict) else []
        if extra:
            return f"{call.name}: {extra[0]} is not an argument the tool declares"
    try:
        validator = schema_validator(schema, strict_integer=True)
        error = next(iter(sorted(validator.iter_errors(call.arguments), key=lambda e: list(e.path))), None)
    except Unresolvable as exc:
        outside = _reference(exc)
        return f"{call.name}: the tool's schema refers outside itself ({outside}); only its own parts are followed"
    except (SchemaError, RecursionError) as exc:
        return f"{call.name}: the tool's schema cannot be applied ({type(exc).__name__})"
    if error is None:
        return None
    return f"{call.name}: {_where(error)}{_said(error)}"


def _reference(exc: Unresolvable) -> str:
    ref = getattr(exc, "ref", None)
    return compact(ref) if isinstance(ref, str) else type(exc).__name__


_WORDED = {"type": "of type", "enum": "one of", "const": "the constant"}


def _where(error: ValidationError) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
    return f"{path}: " if path else ""


def _said(error: ValidationError) -> str:
    """The validator's message, the value it quotes kept short."""
    if error.absolute_path and error.validator in _WORDED:
        wanted = error.validator_value
        shown = wanted if error.validator == "type" and isinstance(wanted, str) else compact(wanted)
        return f"{compact(error.instance)} is not {_WORDED[str(error.validator)]} {shown}"
    message = " ".join(error.message.split())
    return message if len(message) <= 120 else message[:119] + "…"


class ToolArgsConform(CheckType[ConformParams]):
    """Pass when the answer calls a tool and every call's arguments conform to that tool's JSON Schema.

    Required arguments, types (an integer refuses 5.0), enums, formats the schema states (date, date-time, time,
    duration, email, hostname, ipv4, ipv6, uri, uri-reference, uri-template, json-pointer, uuid, regex; a string
    over 8,192 characters never conforms to one; iri is not checked), and no argument the tool does not declare
    (unless `undeclared` is true) are held by a JSON Schema validator (Draft 2020-12). A `$ref` is followed only
    within the tool's own schema (never to a URL or a file), and a `pattern` is searched with the time limit of
    every regex check. Arguments that were not valid JSON as written, or an answer cut at the token limit, never
    conform.
    """

    name = "tool_args_conform"
    roles = frozenset({"expects_call", "judges_arguments"})
    params_model = ConformParams
    example: ClassVar[Mapping[str, Any]] = {"weight": 2}

    def evaluate(self, answer: Answer) -> Outcome:
        if answer.cut:
            return Outcome.fail("answer cut at the token limit: its calls are not judged")
        if not answer.tool_calls:
            return Outcome.fail("no tool call")
        for call in answer.tool_calls:
            problem = _problem(call, answer.tools, self.params.undeclared)
            if problem:
                return Outcome.fail(problem)
        return Outcome.ok(f"{len(answer.tool_calls)} call(s) conform to their tools' schemas")
