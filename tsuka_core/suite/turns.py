"""The multi-turn part of the test-file format: the tool environment a test names, and its turns.

A multi-turn test names a registered tool environment and its initial
configuration (``environment``), and lists ``turns``: each a user prompt, the
tools it reveals from then on, the reference calls that do what the turn asks
(executed in an environment of their own, for the checks to compare), and the
checks of the turn as a whole. The configuration is in the file and the code
in an installed plugin: a file copied alone into another folder still runs.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Self

from pydantic import Field, PrivateAttr, ValidationError, ValidationInfo, model_validator

from tsuka_core.judge.environment import ToolEnvironment
from tsuka_core.suite import model
from tsuka_core.suite.pieces import Check, Tool, registry_and_type, unknown_type
from tsuka_core.suite.problems import FormatModel, input_kind, problem

if TYPE_CHECKING:
    from pydantic import BaseModel, ModelWrapValidatorHandler
    from pydantic_core import ErrorDetails, InitErrorDetails

__all__ = ["MAX_TURNS", "Environment", "ReferenceCall", "Turn", "environment_spec"]

MAX_TURNS = 100
"""The most turns a test may have."""
MAX_REFERENCE_CALLS = 200
"""The most reference calls one turn may state."""


def _config_problem(name: str, error: ErrorDetails) -> InitErrorDetails:
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        message = f"unknown key for tool environment {name!r}"
    elif error["type"] == "missing":
        message = f"required by tool environment {name!r}"
    elif error["type"].endswith("_type"):
        message = f"{message}, got {input_kind(error['input'])}"
    return problem(("config", *error["loc"]), message, error["input"])


class Environment(FormatModel):
    """The tool environment a multi-turn test's calls execute in: a registered type and its configuration."""

    not_an_object: ClassVar[str] = 'must be {"type": "...", "config": {...}}'
    expected: ClassVar[Mapping[str, str]] = {
        "type": "the name of a registered tool environment ('tsuka plugins' lists them)",
        "config": "an object",
    }

    type: Annotated[str, Field(min_length=1)]
    """The tool environment, as a plugin registered it."""
    config: dict[str, Any] = Field(default_factory=dict)
    """Its initial configuration, validated by the environment's own model."""

    _cls: builtins.type[ToolEnvironment[Any]] | None = PrivateAttr(None)
    _config: BaseModel | None = PrivateAttr(None)

    @model_validator(mode="wrap")
    @classmethod
    def _worded(cls, data: Any, handler: ModelWrapValidatorHandler[Self], info: ValidationInfo) -> Self:
        """Replaces the base's validator of this name: the type picks the model of ``config``."""
        typed = registry_and_type(data, info)
        if typed is None:
            return cls.validated(data, handler, first=[], last=[])
        registry, name = typed
        found = registry.environment(name)
        if found is None:
            unknown = unknown_type("tool environment", name, registry.environments, "tsuka plugins", registry)
            return cls.validated(data, handler, first=[unknown], last=[])
        config = data.get("config", {})
        try:
            parsed = found.config_model.model_validate(config)
        except ValidationError as exc:
            return cls.validated(data, handler, first=[], last=[_config_problem(name, e) for e in exc.errors()])
        built = cls.validated(data, handler, first=[], last=[])
        built._cls, built._config = found, parsed
        return built

    def spec(self) -> model.EnvironmentSpec:
        """The environment ready to build, once validated with a registry."""
        if self._cls is None or self._config is None:
            raise ValueError("environment: validated without a registry, so its type is unknown")
        return model.EnvironmentSpec(self._cls, self._config.model_dump(mode="json"))


class ReferenceCall(FormatModel):
    """A call that does what the turn asks, executed in the reference environment for the checks to compare."""

    not_an_object: ClassVar[str] = 'must be {"name": "...", "arguments": {...}}'

    name: Annotated[str, Field(min_length=1)]
    """The tool called."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Its arguments, a JSON object."""


ReferenceCalls = Annotated[list[ReferenceCall], Field(max_length=MAX_REFERENCE_CALLS)]


def environment_spec(environment: Environment, references: bool) -> model.EnvironmentSpec:
    """The test's environment, with whether a reference environment is needed."""
    spec = environment.spec()
    return model.EnvironmentSpec(spec.cls, spec.config, references)


class Turn(FormatModel):
    """One user turn: its prompt, the tools it reveals, its reference calls, and the checks of the turn as a whole."""

    not_an_object: ClassVar[str] = "a turn must be an object"

    prompt: str
    """Sent as a user message; the model then answers, step after step, until it calls no tool."""
    reveal: tuple[Tool, ...] = ()
    """Tools offered from this turn on, beside the test's `tools`."""
    reference: ReferenceCalls | None = None
    """Calls that do what this turn asks, executed in the reference environment after the model's turn (for
    `state_matches` and `results_include`); unset: the test states no reference for this turn."""
    checks: list[Check] = Field(default_factory=list)
    """Checks of the turn: its final answer, every call the model made in it, and its environment's state."""
