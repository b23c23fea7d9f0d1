"""A check type that holds every tool call's arguments to the offered tool's own JSON Schema."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError
from jsonschema.validators import extend
from referencing.exceptions import Unresolvable

from tsuka_checks_builtin.argsem import offered
from tsuka_checks_builtin.json import compact
from tsuka_core import Answer, CheckParams, CheckType, Outcome, ToolCall

__all__ = ["ToolArgsConform"]


def _whole_number(checker: Any, instance: Any) -> bool:
    """JSON Schema's ``integer``, without the float ``5.0`` that drafts 6 and later admit (BFCL refuses it)."""
    del checker
    return isinstance(instance, int) and not isinstance(instance, bool)


_Strict = extend(  # type: ignore[no-untyped-call]  # jsonschema's extend() has no annotations
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _whole_number),
)
"""Draft 2020-12 with a strict ``integer``."""


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
        _Strict.check_schema(schema)
        error = next(iter(sorted(_Strict(schema).iter_errors(call.arguments), key=lambda e: list(e.path))), None)
    except (SchemaError, Unresolvable, RecursionError) as exc:
        return f"{call.name}: the tool's schema cannot be applied ({type(exc).__name__})"
    if error is None:
        return None
    return f"{call.name}: {_where(error)}{_said(error)}"


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

    Required arguments, types (an integer refuses 5.0), enums, formats the schema states, and no argument the
    tool does not declare (unless `undeclared` is true) are held by a JSON Schema validator (Draft 2020-12);
    arguments that were not valid JSON as written, or an answer cut at the token limit, never conform.
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
