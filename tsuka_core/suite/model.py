"""The loaded form of a suite: tests, their steps and their checks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tsuka_core.terms import Category

if TYPE_CHECKING:
    from tsuka_core.judge.checks import CheckParams, CheckType
    from tsuka_core.judge.environment import ToolEnvironment
    from tsuka_core.judge.scorecard import Scorecard

__all__ = ["Check", "EnvironmentSpec", "Step", "Suite", "Test"]


@dataclass(frozen=True)
class Check:
    """One check of a step: its type, weight and validated parameters, ready to evaluate."""

    type: str
    weight: float
    params: CheckParams
    impl: CheckType[Any] = field(repr=False)
    location: str
    """Where it stands in its file, e.g. ``steps[1].checks[0]``."""


@dataclass(frozen=True)
class Step:
    """One request of a test (an optional prompt, an optional tool result), or one turn of a multi-turn test."""

    prompt: str | None
    tool_result: str | None
    checks: tuple[Check, ...]
    reveal: tuple[Mapping[str, Any], ...] = ()
    """A turn's tools offered from it on."""
    reference: tuple[tuple[str, Mapping[str, Any]], ...] | None = None
    """A turn's reference calls (name, arguments); None when the turn states none."""
    turn: bool = False
    """A turn: the model answers step after step until it calls no tool, each call executed."""


@dataclass(frozen=True)
class EnvironmentSpec:
    """The tool environment a multi-turn test names: its registered class and its validated configuration."""

    cls: type[ToolEnvironment[Any]]
    config: Mapping[str, Any]
    """The configuration as JSON, validated by the class's ``config_model``."""
    reference: bool = False
    """The test states reference calls: a reference environment is built beside the model's."""


@dataclass(frozen=True)
class Test:
    """One test file, validated."""

    file: str
    name: str
    category: Category
    steps: tuple[Step, ...]
    weight: float = 1
    description: str = ""
    tools: tuple[Mapping[str, Any], ...] = ()
    system: str | None = None
    messages: tuple[Mapping[str, str], ...] = ()
    """The conversation the test starts from, sent after ``system`` and before the first prompt."""
    environment: EnvironmentSpec | None = None
    """A multi-turn test's tool environment; its steps are turns."""

    @property
    def check_count(self) -> int:
        """How many checks all steps hold."""
        return sum(len(step.checks) for step in self.steps)


@dataclass(frozen=True)
class Suite:
    """A folder of tests in file-name order, with its hash and any warnings."""

    path: Path
    tests: tuple[Test, ...]
    hash: str
    warnings: tuple[str, ...] = ()
    name: str = ""
    """What profiles call it: a registered suite's name, ``default``, or the folder's full path."""
    scorecard: Scorecard | None = field(default=None, compare=False, repr=False)
    """The registered scorecard that knows this suite, if any."""

    def by_category(self, category: Category) -> list[Test]:
        """The tests of one category, in suite order."""
        return [t for t in self.tests if t.category == category]
