"""A check type that matches the answer's tool calls as a set: each expected call by a call of its own, in any order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar

from pydantic import Field

from tsuka_checks_builtin.json import compact
from tsuka_core import Answer, CheckParams, CheckType, Outcome, ToolCall, json_equal

__all__ = ["ToolCallsMatch"]


class ExpectedCall(CheckParams):
    """One call the answer must make: the tool, and the arguments it must carry (others may be present too)."""

    name: str
    """The tool's name (case-sensitive)."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Top-level arguments and the JSON values expected in them (typed: true is not "true")."""


class CallsMatchParams(CheckParams):
    """The calls expected in one answer, in any order."""

    calls: Annotated[list[ExpectedCall], Field(min_length=1, max_length=16)]
    """Each expected call; two equal entries need two calls."""
    exact: bool = True
    """True (the default): no call beyond the expected ones; false: other calls may be made too."""


class ToolCallsMatch(CheckType[CallsMatchParams]):
    """Pass when every expected call is made by a distinct tool call, in any order (BFCL's parallel matching).

    A call whose arguments are not valid JSON as the model wrote them (repaired, or
    unreadable) matches no expected call: in a parallel answer a server could not run it.
    """

    name = "tool_calls_match"
    roles = frozenset[str]()
    params_model = CallsMatchParams
    example: ClassVar[Mapping[str, Any]] = {
        "calls": [
            {"name": "get_weather", "arguments": {"city": "Paris"}},
            {"name": "get_weather", "arguments": {"city": "Rome"}},
        ],
        "exact": True,
        "weight": 2,
    }

    def evaluate(self, answer: Answer) -> Outcome:
        expected, made = self.params.calls, answer.tool_calls
        if self.params.exact and len(made) != len(expected):
            return Outcome.fail(f"{len(made)} tool call(s) ({_names(made)}), expected {len(expected)}")
        if _match(expected, made) is not None:
            return Outcome.check(True, f"each expected call made, in any order (calls: {_names(made)})")
        missing = next((e for e in expected if not any(_fits(e, call) for call in made)), None)
        if missing is None:
            return Outcome.fail(_ambiguous(made))
        return Outcome.fail(f"no call matches {_shown(missing)} (calls: {_names(made)})")


def _fits(expected: ExpectedCall, call: ToolCall) -> bool:
    """Whether ``call`` makes ``expected``: same tool, arguments valid as written, each expected one equal."""
    if call.name != expected.name or call.arguments_problem or call.repaired or not isinstance(call.arguments, dict):
        return False
    wanted = expected.arguments.items()
    return all(key in call.arguments and json_equal(call.arguments[key], value) for key, value in wanted)


def _match(expected: Sequence[ExpectedCall], made: Sequence[ToolCall]) -> list[int] | None:
    """A distinct call for each expected one (their indexes), by backtracking; None when there is no such choice."""
    chosen: list[int] = []

    def place(i: int) -> bool:
        if i == len(expected):
            return True
        for index, call in enumerate(made):
            if index not in chosen and _fits(expected[i], call):
                chosen.append(index)
                if place(i + 1):
                    return True
                chosen.pop()
        return False

    return chosen if place(0) else None


def _names(made: Sequence[ToolCall]) -> str:
    return ", ".join(c.name for c in made) or "none"


def _shown(expected: ExpectedCall) -> str:
    args = ", ".join(f"{k}={compact(v)}" for k, v in expected.arguments.items())
    return f"{expected.name}({args})"


def _ambiguous(made: Sequence[ToolCall]) -> str:
    return f"each expected call matches some call, but not each a call of its own (calls: {_names(made)})"
