"""Check types that validate JSON against a JSON Schema: the JSON of the answer, and the arguments of tool calls."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Literal

from jsonschema import exceptions  # type: ignore[import-untyped, unused-ignore]
from pydantic import PrivateAttr, model_validator

from tsuka_core import Answer, CheckParams, CheckType, Outcome, Pattern, ToolCall, extract_json, schema_validator

__all__ = ["JsonSchema", "JsonSchemaParams", "ToolArgsSchema", "ToolArgsSchemaParams", "compile_schema"]

_MESSAGE_CHARS = 160
_MAX_PROBLEMS = 3
_NO_PARAMETERS: Mapping[str, Any] = {"type": "object", "properties": {}}
_OWN_EXTRAS_RULE = ("additionalProperties", "unevaluatedProperties")


def _clip(text: str, limit: int = _MESSAGE_CHARS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _location(path: Iterable[Any]) -> str:
    """A path into a JSON value written as in a JMESPath: ``items[0].name``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def compile_schema(schema: Mapping[str, Any]) -> Any:
    """A validator for ``schema`` (its ``$schema`` draft, else 2020-12) that also asserts formats.

    tsuka's ``schema_validator`` makes it safe for a suite's data: a ``$ref`` resolves within the schema only,
    patterns are searched with a time limit. Raises ValueError naming where the schema is wrong when it is not a
    valid JSON Schema.
    """
    try:
        return schema_validator(dict(schema))
    except exceptions.SchemaError as error:
        where = _location(error.absolute_path)
        reason = f"at {where}: {_clip(error.message)}" if where else _clip(error.message)
        raise ValueError(f"not a valid JSON Schema: {reason}") from None


@functools.lru_cache(maxsize=256)
def _compiled_text(schema_text: str) -> Any:
    return compile_schema(json.loads(schema_text))


def _cached_validator(schema: Mapping[str, Any]) -> Any:
    """The validator of a tool's schema, compiled once per distinct schema."""
    return _compiled_text(json.dumps(schema, sort_keys=True))


# --- json_schema ----------------------------------------------------------------------------------------------------


# docs:start json-schema-params
class JsonSchemaParams(CheckParams):
    """A JSON Schema in ``value``, checked when the suite loads."""

    value: dict[str, Any]
    """The JSON Schema the answer's JSON must match (draft 2020-12 unless it names another in $schema)."""

    _validator: Any = PrivateAttr()

    @model_validator(mode="after")
    def _compile(self) -> JsonSchemaParams:
        self._validator = compile_schema(self.value)
        return self

    @property
    def validator(self) -> Any:
        """The compiled validator."""
        return self._validator


# docs:end json-schema-params


# docs:start json-schema-check
class JsonSchema(CheckType[JsonSchemaParams]):
    """Pass when the JSON taken from the answer matches the JSON Schema in `value`."""

    name = "json_schema"
    params_model = JsonSchemaParams
    example: ClassVar[dict[str, Any]] = {
        "value": {
            "type": "object",
            "required": ["name", "price"],
            "properties": {"name": {"type": "string"}, "price": {"type": "number", "minimum": 0}},
        }
    }

    def evaluate(self, answer: Answer) -> Outcome:
        found = extract_json(answer.text)
        if found is None:
            return Outcome.fail("no JSON in the answer")
        errors = list(self.params.validator.iter_errors(found.value))
        if not errors:
            return Outcome.ok(f"{found.method} JSON matches the schema")
        best = exceptions.best_match(errors)
        where = _location(best.absolute_path)
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return Outcome.fail(f"{'at ' + where + ': ' if where else ''}{_clip(best.message)}{more}")


# docs:end json-schema-check


# --- tool_args_schema -----------------------------------------------------------------------------------------------


class ToolArgsSchemaParams(CheckParams):
    """How strictly the arguments of tool calls are held to the schemas of the tools offered."""

    strict: bool = True
    """Arguments the schema does not declare fail as invented, even without additionalProperties: false."""
    calls: Literal["first", "all"] = "first"
    """Judge the first tool call only, or every call of the answer (parallel calls)."""


def _offered(tools: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """The offered tools' parameter schemas, by tool name (a tool without parameters takes none)."""
    found: dict[str, Mapping[str, Any]] = {}
    for tool in tools:
        function = tool.get("function")
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            parameters = function.get("parameters")
            found[function["name"]] = parameters if isinstance(parameters, Mapping) else _NO_PARAMETERS
    return found


def _undeclared(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> list[str]:
    """Argument names the schema neither lists in ``properties`` nor matches with ``patternProperties``."""
    if any(key in schema for key in _OWN_EXTRAS_RULE):
        return []
    properties = schema.get("properties")
    patterns = schema.get("patternProperties")
    declared = set(properties) if isinstance(properties, Mapping) else set()
    regexes = list(patterns) if isinstance(patterns, Mapping) else []
    return [name for name in arguments if name not in declared and not any(_found(p, name) for p in regexes)]


def _found(source: str, name: str) -> bool:
    """Whether ``source`` (a schema's pattern) is found in ``name``, with tsuka's time limit; a bad pattern never is."""
    try:
        return Pattern.compile(source).search(name)
    except ValueError:
        return False


def _arguments(kind: str, names: Sequence[str]) -> str:
    """``invented argument 'x'`` or ``invented arguments 'x', 'y'``."""
    return f"{kind} argument{'s' if len(names) > 1 else ''} {', '.join(repr(name) for name in names)}"


def _problem(error: Any, schema: Mapping[str, Any]) -> str:
    """One schema violation of tool arguments, in the words of tool calling."""
    at_top = not error.absolute_path
    if at_top and error.validator == "required":
        missing = [name for name in error.validator_value if name not in error.instance]
        return _arguments("missing required", missing)
    if at_top and error.validator == "additionalProperties":
        loose = {k: v for k, v in schema.items() if k not in _OWN_EXTRAS_RULE}
        return _arguments("invented", _undeclared(loose, error.instance))
    where = _location(error.absolute_path)
    return f"argument {where}: {_clip(error.message)}" if where else _clip(error.message)


class ToolArgsSchema(CheckType[ToolArgsSchemaParams]):
    """Pass when the first tool call's arguments match the parameters schema of the tool called, as offered."""

    name = "tool_args_schema"
    params_model = ToolArgsSchemaParams
    example: ClassVar[dict[str, Any]] = {"weight": 2}

    def evaluate(self, answer: Answer) -> Outcome:
        calls = answer.tool_calls if self.params.calls == "all" else answer.tool_calls[:1]
        if not calls:
            return Outcome.fail("no tool call")
        offered = _offered(answer.tools)
        outcomes = [self._judge(call, offered) for call in calls]
        if len(outcomes) > 1:
            outcomes = [Outcome(o.status, f"call {i} {o.detail}") for i, o in enumerate(outcomes, start=1)]
        errored = [o for o in outcomes if o.status == "errored"]
        if errored:
            return errored[0]
        failed = [o.detail for o in outcomes if not o.passed]
        if failed:
            return Outcome.fail("; ".join(failed))
        return Outcome.ok("; ".join(o.detail for o in outcomes))

    def _judge(self, call: ToolCall, offered: Mapping[str, Mapping[str, Any]]) -> Outcome:
        if call.name not in offered:
            names = ", ".join(offered) or "none"
            return Outcome.fail(f"called {call.name}, which the test does not offer (offered: {names})")
        if call.arguments_problem:
            return Outcome.fail(f"{call.name}: {call.arguments_problem}")
        schema = offered[call.name]
        try:
            validator = _cached_validator(schema)
        except ValueError as exc:
            return Outcome.error(f"the parameters of tool {call.name} are {exc}")
        problems = [_problem(error, schema) for error in validator.iter_errors(call.arguments)]
        if self.params.strict and (extra := _undeclared(schema, call.arguments)):
            problems.insert(0, _arguments("invented", extra))
        if not problems:
            return Outcome.ok(f"{call.name}({', '.join(call.arguments)}) matches its schema")
        more = f" (and {len(problems) - _MAX_PROBLEMS} more)" if len(problems) > _MAX_PROBLEMS else ""
        return Outcome.fail(f"{call.name}: {'; '.join(problems[:_MAX_PROBLEMS])}{more}")
