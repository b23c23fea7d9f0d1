"""The pieces of the test-file format every form shares: weights, tools, messages and checks.

Validating a check with a :class:`~tsuka_core.plugins.registry.Registry` as the
context also checks its ``type`` against the registry and its other keys
against that check type's parameter model.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Self

from pydantic import (
    MISSING,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    WrapValidator,
    model_validator,
)

from tsuka_core.judge.checks import CheckParams, CheckType
from tsuka_core.plugins.registry import Registry
from tsuka_core.suite import model
from tsuka_core.suite.problems import FormatModel, input_kind, location, problem, suggest
from tsuka_core.terms import Tier

if TYPE_CHECKING:
    from pydantic import ModelWrapValidatorHandler, ValidatorFunctionWrapHandler
    from pydantic_core import ErrorDetails, InitErrorDetails

__all__ = [
    "MAX_WEIGHT",
    "Check",
    "Checks",
    "Message",
    "Tool",
    "ToolFunction",
    "Weight",
    "build_check",
    "check_params",
]

MAX_WEIGHT = 1_000_000
"""The largest weight a test or a check may have: weights are shares, and a sum of them must stay finite."""


def _as_written(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """Validate a number, keeping an integer an integer (a report shows weight 2, not 2.0)."""
    number = handler(value)
    return value if type(value) is int else number


Weight = Annotated[float, Field(gt=0, le=MAX_WEIGHT, allow_inf_nan=False, strict=True), WrapValidator(_as_written)]


class ToolFunction(FormatModel):
    """The function a tool offers: its name, what it does, and the JSON Schema of its arguments."""

    model_config = ConfigDict(extra="allow")
    expected: ClassVar[Mapping[str, str]] = {"name": "a non-empty string", "parameters": "a JSON Schema object"}

    name: Annotated[str, Field(min_length=1)]
    """The name the model calls it by."""
    description: str | MISSING = MISSING
    """What the function does, for the model."""
    parameters: dict[str, Any] | MISSING = MISSING
    """A JSON Schema for the arguments."""
    required_tier: Tier = Field("small", alias="requiredTier")
    """Lowest tier that may see the tool; the benchmark ignores it."""


class Message(FormatModel):
    """One message of the conversation a test starts from, sent as written."""

    expected: ClassVar[Mapping[str, str]] = {"role": "system, user or assistant", "content": "a string"}

    role: Literal["system", "user", "assistant"]
    """Who says it."""
    content: str
    """What is said."""


class Tool(FormatModel):
    """An OpenAI function schema, offered on every step."""

    model_config = ConfigDict(extra="allow")
    not_an_object: ClassVar[str] = 'must be {"type": "function", "function": {...}}'
    expected: ClassVar[Mapping[str, str]] = {"function": "an object naming the function"}

    type: Literal["function"]
    """Always `function`."""
    function: ToolFunction
    """The function offered."""
    required_tier: Tier = Field("small", alias="requiredTier")
    """Lowest tier that may see the tool; the benchmark ignores it."""


def _params_problem(type_name: str, error: ErrorDetails, allowed: list[str]) -> InitErrorDetails:
    """One error of a check's parameters, worded with the check type's name."""
    loc, kind = tuple(error["loc"]), error["type"]
    if kind == "missing":
        message = f"required by check type {type_name!r}"
    elif kind == "extra_forbidden":
        message = f"unknown key for check type {type_name!r}{suggest(str(loc[-1]), allowed)}"
    else:
        message = str(error["msg"]).removeprefix("Value error, ")
        if kind.endswith("_type"):
            message = f"{message}, got {input_kind(error['input'])}"
    return problem(loc, message, error["input"])


def check_params(
    check_type: type[CheckType[Any]], params: Mapping[str, Any], registry: Registry | None = None
) -> tuple[CheckParams | None, list[str]]:
    """``params`` (a check's keys besides ``type`` and ``weight``) validated as a suite validates them.

    The parameters, or None and every problem as ``tsuka validate`` words it, one line each: ``value: required
    by check type 'word_count'``.
    """
    try:
        return check_type.params_model.model_validate(dict(params), context=registry), []
    except ValidationError as exc:
        allowed = ["type", "weight", *check_type.params_model.model_fields]
        found = [_params_problem(check_type.name, error, allowed) for error in exc.errors()]
        return None, [f"{location(p['loc']) or 'parameters'}: {p['type'].message()}" for p in found]  # type: ignore[union-attr]


def build_check(spec: Mapping[str, Any], registry: Registry | None = None) -> CheckType[Any]:
    """A check as a test writes it (``{"type": "not_contains", "value": ","}``), validated as a suite validates
    it and ready to judge: for a check type whose parameters hold other checks. ``weight`` is not read.

    Raises ValueError naming the problem (an unknown type, with the closest names; a parameter not its own).
    """
    from tsuka_core.plugins.registry import load_registry

    registry = registry or load_registry()
    name = spec.get("type")
    found = registry.check_type(name) if isinstance(name, str) else None
    if found is None:
        hint = suggest(name, sorted(registry.check_types)) if isinstance(name, str) else ""
        raise ValueError(f"unknown check type {name!r}{hint} ('tsuka checks' lists them)")
    params, problems = check_params(found, {k: v for k, v in spec.items() if k not in ("type", "weight")}, registry)
    if params is None:
        raise ValueError(f"{name}: {problems[0]}")
    return found(params)


def registry_and_type(data: Any, info: ValidationInfo) -> tuple[Registry, str] | None:
    """The registry a suite is validated with and the ``type`` an entry names; None without either."""
    registry = info.context if isinstance(info.context, Registry) else None
    name = data.get("type") if isinstance(data, dict) else None
    if registry is None or not isinstance(name, str) or not name:
        return None
    return registry, name


def unknown_type(kind: str, name: str, known: Iterable[str], lister: str, registry: Registry) -> InitErrorDetails:
    """The problem of a ``type`` no plugin registered: the closest name, the command listing them, plugins' notes."""
    why = f"unknown {kind} {name!r}{suggest(name, sorted(known))} ('{lister}' lists them){registry.missing_hint()}"
    return problem(("type",), why)


class Check(FormatModel):
    """One check; `type` selects it."""

    model_config = ConfigDict(extra="allow")
    not_an_object: ClassVar[str] = "a check must be an object"
    expected: ClassVar[Mapping[str, str]] = {
        "type": "the name of a check type ('tsuka checks' lists them)",
        "weight": "a number > 0",
    }

    type: Annotated[str, Field(min_length=1)]
    """The check type; its parameters are the check's other keys."""
    weight: Weight = 1
    """Weight of the check in its test's score: > 0, at most 1000000."""

    _params: CheckParams | None = PrivateAttr(None)
    _impl: CheckType[Any] | None = PrivateAttr(None)

    def built(self, where: str) -> model.Check:
        """The check ready to evaluate, standing at ``where`` in its file; it needs a registry's validation."""
        if self._params is None or self._impl is None:
            raise ValueError(f"{where}: validated without a registry, so its check type is unknown")
        return model.Check(self.type, self.weight, self._params, self._impl, where)

    @model_validator(mode="wrap")
    @classmethod
    def _worded(cls, data: Any, handler: ModelWrapValidatorHandler[Self], info: ValidationInfo) -> Self:
        """Replaces the base's validator of this name: a check's type picks the model of its other keys."""
        typed = registry_and_type(data, info)
        if typed is None:
            return cls.validated(data, handler, first=[], last=[])
        registry, type_name = typed
        check_type = registry.check_type(type_name)
        if check_type is None:
            unknown = unknown_type("check type", type_name, registry.check_types, "tsuka checks", registry)
            return cls.validated(data, handler, first=[unknown], last=[])
        params_model = check_type.params_model
        try:
            params = params_model.model_validate(
                {k: v for k, v in data.items() if k not in ("type", "weight")}, context=registry
            )
        except ValidationError as exc:
            allowed = ["type", "weight", *params_model.model_fields]
            found = [_params_problem(type_name, error, allowed) for error in exc.errors()]
            return cls.validated(data, handler, first=[], last=found)
        check = cls.validated(data, handler, first=[], last=[])
        check._params, check._impl = params, check_type(params)
        return check


Checks = Annotated[list[Check], Field(min_length=1)]
