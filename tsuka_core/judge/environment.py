"""Tool environments: tools whose calls really execute against state, and what a turn's checks see of them.

A multi-turn test names a registered :class:`ToolEnvironment` and gives its
initial configuration; tsuka builds one for the model's calls and, when the
test states reference calls, one for those, each in a worker process of its
own (a call that runs too long or takes too much memory ends the test, never
the run). After each turn, the turn's checks get a :class:`TurnState`: every
result the model's calls got so far, the results of this turn's reference
calls, and how the two environments' states differ.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

__all__ = ["EXECUTION_ERROR", "NoConfig", "ToolEnvironment", "TurnState"]

EXECUTION_ERROR = "Error during execution: "
"""What leads the result of a call that raised, before the exception's message (BFCL's wording)."""


class NoConfig(BaseModel):
    """The configuration of an environment that takes none."""

    model_config = {"extra": "forbid", "frozen": True}


ConfigT = TypeVar("ConfigT", bound=BaseModel)


class ToolEnvironment(Generic[ConfigT]):
    """Tools whose calls execute against state: subclass it, name it, and register the class.

    ``config_model`` validates the test's ``environment.config`` when the suite
    loads (``tsuka validate`` names a bad field); tsuka then builds the
    environment from it in a worker process, once for the model's calls and
    once for the test's reference calls. ``call`` executes one call and returns
    the text the model gets back; an exception it raises becomes the result
    ``Error during execution: <message>``. ``state`` is the state as JSON, shown
    in ``tsuka show``; ``differences`` says how another environment's state
    differs from this one's ({} when they are the same).
    """

    name: ClassVar[str] = ""
    """What a test's ``environment.type`` calls it."""
    config_model: ClassVar[type[BaseModel]] = NoConfig
    """The pydantic model of ``environment.config``."""

    def __init__(self, config: ConfigT) -> None:
        self.config = config

    def call(self, name: str, arguments: dict[str, Any]) -> str:
        """Execute the call of tool ``name`` with ``arguments`` (a JSON object) and return its result as text."""
        raise NotImplementedError

    def state(self) -> dict[str, Any]:
        """The environment's state, as JSON values."""
        return {}

    def differences(self, other: ToolEnvironment[ConfigT]) -> dict[str, Any]:
        """How ``other``'s state differs from this one's, by key: ``{key: {"model": …, "reference": …}}``.

        This environment holds the model's calls, ``other`` the reference calls. By default, the keys of
        :meth:`state` whose values differ.
        """
        mine, theirs = self.state(), other.state()
        return {
            key: {"model": mine.get(key), "reference": theirs.get(key)}
            for key in sorted(set(mine) | set(theirs))
            if mine.get(key) != theirs.get(key)
        }


@dataclass(frozen=True)
class TurnState:
    """What a turn's checks see of its environment once the turn is over."""

    results: tuple[str, ...] = ()
    """The result of every call the model's environment executed, in every turn so far, in order."""
    reference_results: tuple[str, ...] = ()
    """The results of this turn's reference calls (none when the test states none)."""
    differences: Mapping[str, Any] = field(default_factory=dict)
    """How the model's environment differs from the reference one after this turn ({}: the same, or no reference)."""
    has_reference: bool = False
    """The test states reference calls, so ``differences`` was measured."""
    state: Mapping[str, Any] = field(default_factory=dict)
    """The model's environment's state after this turn."""
    calls: int = 0
    """How many of the model's calls the environment executed in this turn."""
