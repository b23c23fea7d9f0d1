"""The test-file format as pydantic models: what a file may hold, and the one source of its JSON Schema.

Validating with a :class:`~tsuka_core.plugins.registry.Registry` as the
context also checks each check's ``type`` against the registry and its other
keys against that check type's parameter model; without one, a check's shape
only (a ``type`` name and a ``weight``) is checked.
"""

from __future__ import annotations

from collections.abc import Mapping
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
from tsuka_core.terms import Category, Tier

if TYPE_CHECKING:
    from pydantic import JsonValue, ModelWrapValidatorHandler, ValidatorFunctionWrapHandler
    from pydantic_core import ErrorDetails, InitErrorDetails

__all__ = [
    "MAX_WEIGHT",
    "Check",
    "Message",
    "Step",
    "TestFile",
    "Tool",
    "ToolFunction",
    "build_check",
    "check_params",
    "parse_test",
]

MAX_WEIGHT = 1_000_000
"""The largest weight a test or a check may have: weights are shares, and a sum of them must stay finite."""

FIRST_STEP_NEEDS_PROMPT = "the first step needs a prompt"
STEP_NEEDS_INPUT = "a step needs a 'prompt' or a 'toolResult' (or both)"


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
        registry = info.context if isinstance(info.context, Registry) else None
        type_name = data.get("type") if isinstance(data, dict) else None
        if registry is None or not isinstance(type_name, str) or not type_name:
            return cls.validated(data, handler, first=[], last=[])
        check_type = registry.check_type(type_name)
        if check_type is None:
            hint = suggest(type_name, sorted(registry.check_types))
            why = f"unknown check type {type_name!r}{hint} ('tsuka checks' lists them){registry.missing_hint()}"
            unknown = problem(("type",), why)
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


class Step(FormatModel):
    """One request: a prompt and/or the result of the previous step's first tool call, and checks."""

    model_config = ConfigDict(json_schema_extra={"anyOf": [{"required": ["prompt"]}, {"required": ["toolResult"]}]})
    not_an_object: ClassVar[str] = "a step must be an object"
    expected: ClassVar[Mapping[str, str]] = {"checks": "a non-empty array of checks"}

    prompt: str | MISSING = MISSING
    """Sent as a user message."""
    tool_result: str | MISSING = Field(MISSING, alias="toolResult")
    """Sent back as the result of the previous step's first tool call."""
    checks: Checks
    """The checks of the answer to this request."""

    @classmethod
    def rules(cls, data: Mapping[str, Any]) -> list[InitErrorDetails]:
        """A step adds a prompt or a tool result to the conversation."""
        return [] if "prompt" in data or "toolResult" in data else [problem((), STEP_NEEDS_INPUT)]


def _first_step_has_a_prompt(schema: dict[str, Any]) -> None:
    schema["prefixItems"] = [{"allOf": [schema["items"], {"required": ["prompt"]}]}]


SHORT_OR_LONG_FORM: list[JsonValue] = [
    {"required": ["prompt", "checks"], "properties": {"steps": False}},
    {"required": ["steps"], "properties": {"prompt": False, "checks": False}},
]


class TestFile(FormatModel):
    """One test of a tsuka suite: a prompt with checks (short form) or a list of steps."""

    __test__: ClassVar[bool] = False  # not a pytest test class
    model_config = ConfigDict(title="tsuka test file", json_schema_extra={"oneOf": SHORT_OR_LONG_FORM})
    not_an_object: ClassVar[str] = "a test file must hold a JSON object"
    expected: ClassVar[Mapping[str, str]] = {
        "name": "a non-empty string",
        "weight": "a number > 0",
        "tools": "an array of tool schemas",
        "checks": "a non-empty array of checks",
        "steps": "a non-empty array of steps",
    }

    name: Annotated[str, Field(pattern=r"\S")]
    """Unique in the suite."""
    category: Category
    """The category the test scores in."""
    description: str = ""
    """What the test measures (informational)."""
    weight: Weight = 1
    """Weight of the test in its category: > 0, at most 1000000."""
    tools: tuple[Tool, ...] = ()
    """Tools offered on every step."""
    system: str | MISSING = MISSING
    """A system message sent first."""
    messages: tuple[Message, ...] = ()
    """Messages sent after `system` and before the first prompt, as written (a conversation the test starts
    from: earlier user and assistant turns)."""
    prompt: str | MISSING = MISSING
    """Short form: the prompt of the only step."""
    checks: Checks | MISSING = MISSING
    """Short form: the checks of the only step."""
    steps: Annotated[list[Step], Field(min_length=1, json_schema_extra=_first_step_has_a_prompt)] | MISSING = MISSING
    """Long form: the requests, in order; the first needs a prompt."""

    @classmethod
    def rules(cls, data: Mapping[str, Any]) -> list[InitErrorDetails]:
        """Exactly one of the two forms, and a first step with a prompt."""
        short, long = "prompt" in data or "checks" in data, "steps" in data
        if short and long:
            return [problem((), "has both 'prompt'/'checks' and 'steps': use one form")]
        if not short and not long:
            return [problem((), "needs 'prompt' with 'checks', or 'steps'")]
        if short:
            missing = [key for key in ("prompt", "checks") if key not in data]
            return [problem((key,), cls._missing_message(key)) for key in missing]
        steps = data["steps"]
        if isinstance(steps, list) and steps and isinstance(steps[0], dict) and "prompt" not in steps[0]:
            return [problem(("steps", 0, "prompt"), FIRST_STEP_NEEDS_PROMPT)]
        return []

    @classmethod
    def _missing_message(cls, key: str) -> str:
        return FIRST_STEP_NEEDS_PROMPT if key == "prompt" else f"required, {cls.expected[key]}"

    @classmethod
    def worded(cls, error: ErrorDetails) -> InitErrorDetails | None:
        """As for any model, less the first step's lack of input, which the first-step rule words better."""
        if tuple(error["loc"]) == ("steps", 0) and error["msg"] == STEP_NEEDS_INPUT:
            return None
        return super().worded(error)


def _steps(test: TestFile) -> tuple[model.Step, ...]:
    """The steps of a validated test, with each check ready to evaluate and its location in the file."""

    def step(prompt: str | MISSING, tool_result: str | MISSING, checks: list[Check], where: str) -> model.Step:
        built = tuple(check.built(f"{where}checks[{i}]") for i, check in enumerate(checks))
        return model.Step(None if prompt is MISSING else prompt, None if tool_result is MISSING else tool_result, built)

    if test.steps is not MISSING:
        return tuple(step(s.prompt, s.tool_result, s.checks, f"steps[{i}].") for i, s in enumerate(test.steps))
    return (step(test.prompt, MISSING, [] if test.checks is MISSING else test.checks, ""),)


def parse_test(file: str, data: Any, registry: Registry) -> tuple[model.Test | None, list[str]]:
    """Validate one file's parsed JSON; returns the test (or ``None``) and every problem found, one line each."""
    try:
        test = TestFile.model_validate(data, context=registry)
    except ValidationError as exc:
        return None, [_line(file, error) for error in exc.errors()]
    tools = tuple(tool.model_dump(by_alias=True, exclude_unset=True) for tool in test.tools)
    system = None if test.system is MISSING else test.system
    messages = tuple({"role": m.role, "content": m.content} for m in test.messages)
    steps = _steps(test)
    built = model.Test(file, test.name, test.category, steps, test.weight, test.description, tools, system, messages)
    return built, []


def _line(file: str, error: ErrorDetails) -> str:
    where = location(error["loc"])
    return f"{file}: {where}: {error['msg']}" if where else f"{file}: {error['msg']}"
