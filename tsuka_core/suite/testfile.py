"""The test-file format as pydantic models: what a file may hold, and the one source of its JSON Schema.

Validating with a :class:`~tsuka_core.plugins.registry.Registry` as the
context also checks each check's ``type`` against the registry and its other
keys against that check type's parameter model; without one, a check's shape
only (a ``type`` name and a ``weight``) is checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import MISSING, ConfigDict, Field, ValidationError

from tsuka_core.plugins.registry import Registry
from tsuka_core.suite import model
from tsuka_core.suite.pieces import (
    MAX_WEIGHT,
    Check,
    Checks,
    Message,
    Tool,
    ToolFunction,
    Weight,
    build_check,
    check_params,
)
from tsuka_core.suite.problems import FormatModel, location, problem
from tsuka_core.suite.turns import MAX_TURNS, Environment, Turn, environment_spec
from tsuka_core.terms import Category

if TYPE_CHECKING:
    from pydantic import JsonValue
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

FIRST_STEP_NEEDS_PROMPT = "the first step needs a prompt"
STEP_NEEDS_INPUT = "a step needs a 'prompt' or a 'toolResult' (or both)"


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
    {"required": ["prompt", "checks"], "properties": {"steps": False, "turns": False, "environment": False}},
    {"required": ["steps"], "properties": {"prompt": False, "checks": False, "turns": False, "environment": False}},
    {"required": ["turns", "environment"], "properties": {"prompt": False, "checks": False, "steps": False}},
]


class TestFile(FormatModel):
    """One test of a tsuka suite: a prompt with checks (short form), a list of steps, or turns in a tool environment."""

    __test__: ClassVar[bool] = False  # not a pytest test class
    model_config = ConfigDict(title="tsuka test file", json_schema_extra={"oneOf": SHORT_OR_LONG_FORM})
    not_an_object: ClassVar[str] = "a test file must hold a JSON object"
    expected: ClassVar[Mapping[str, str]] = {
        "name": "a non-empty string",
        "weight": "a number > 0",
        "tools": "an array of tool schemas",
        "checks": "a non-empty array of checks",
        "steps": "a non-empty array of steps",
        "turns": "a non-empty array of turns",
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
    environment: Environment | MISSING = MISSING
    """Multi-turn form: the tool environment the model's calls really execute in."""
    turns: Annotated[list[Turn], Field(min_length=1, max_length=MAX_TURNS)] | MISSING = MISSING
    """Multi-turn form: the user turns, in order; after each, the model answers step after step until it calls
    no tool, each call executed in `environment` and its result sent back."""

    @classmethod
    def rules(cls, data: Mapping[str, Any]) -> list[InitErrorDetails]:
        """Exactly one of the three forms, a first step with a prompt, and turns with their environment."""
        short, long, turns = "prompt" in data or "checks" in data, "steps" in data, "turns" in data
        if short + long + turns > 1:
            held = [
                name for name, there in (("'prompt'/'checks'", short), ("'steps'", long), ("'turns'", turns)) if there
            ]
            return [problem((), f"has both {' and '.join(held)}: use one form")]
        if turns or "environment" in data:
            needed = "environment" if turns else "turns"
            if needed not in data:
                return [problem((needed,), f"required with '{'turns' if turns else 'environment'}'")]
            return []
        if not short and not long:
            return [problem((), "needs 'prompt' with 'checks', 'steps', or 'turns' with 'environment'")]
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
    if test.turns is not MISSING:
        return tuple(_turn(turn, f"turns[{i}].") for i, turn in enumerate(test.turns))
    return (step(test.prompt, MISSING, [] if test.checks is MISSING else test.checks, ""),)


def _turn(turn: Turn, where: str) -> model.Step:
    checks = tuple(check.built(f"{where}checks[{i}]") for i, check in enumerate(turn.checks))
    reveal = tuple(tool.model_dump(by_alias=True, exclude_unset=True) for tool in turn.reveal)
    reference = None if turn.reference is None else tuple((c.name, dict(c.arguments)) for c in turn.reference)
    return model.Step(turn.prompt, None, checks, reveal=reveal, reference=reference, turn=True)


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
    environment = None
    if test.environment is not MISSING:
        environment = environment_spec(test.environment, any(s.reference is not None for s in steps))
    built = model.Test(
        file, test.name, test.category, steps, test.weight, test.description, tools, system, messages, environment
    )
    return built, []


def _line(file: str, error: ErrorDetails) -> str:
    where = location(error["loc"])
    return f"{file}: {where}: {error['msg']}" if where else f"{file}: {error['msg']}"
