"""Check types that judge the answer's tool calls: which tool, which arguments."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from tsuka_checks_builtin.argsem import declared, type_problem
from tsuka_checks_builtin.json import compact
from tsuka_core import (
    Answer,
    ArgParams,
    CheckParams,
    CheckType,
    Outcome,
    RegexParams,
    first_call_argument,
    json_equal,
)
from tsuka_core.judge.textcalls import text_tool_call

__all__ = ["ToolArgAt", "ToolArgEquals", "ToolArgRegex", "ToolCallAt", "ToolCallCount", "ToolCalled", "ToolNotCalled"]


class ToolNameParams(CheckParams):
    """A tool name."""

    value: str
    """The tool's name (case-sensitive)."""


class OptionalToolNameParams(CheckParams):
    """An optional tool name."""

    value: str | None = None
    """The tool that must not be called; without it, no tool may be called."""


class ArgEqualsParams(ArgParams):
    """An argument and the JSON value expected in it."""

    value: Any
    """The expected JSON value (typed: true is not "true")."""


class ArgRegexParams(ArgParams, RegexParams):  # type: ignore[misc]  # pydantic-mypy: both bases define model_construct
    """An argument and a pattern to find in it (case-insensitive by default)."""

    flags: str = "i"
    """Regex flags; "i" (the default) ignores case, "" is case-sensitive; also m, s."""


class CallCountParams(CheckParams):
    """A number of tool calls, exact or at least."""

    value: Annotated[int, Field(ge=0, le=1000)]
    """The number of tool calls expected in the answer."""
    mode: Literal["exactly", "at_least"] = "exactly"
    """"exactly" (the default) wants that many calls; "at_least" wants that many or more."""
    well_formed: bool = False
    """True: an answer with a call whose arguments were not valid JSON as written fails (a server could not run
    it; BFCL's relevance categories count no call then)."""


class CallAtParams(CheckParams):
    """A tool call's position in the answer and the tool expected there."""

    index: Annotated[int, Field(ge=0, le=1000)]
    """Position of the call in the answer: 0 is the first call, 1 the second."""
    value: str
    """The tool's name (case-sensitive)."""


class ArgAtParams(ArgEqualsParams):
    """An argument of the call at one position, and the JSON value expected in it."""

    index: Annotated[int, Field(ge=0, le=1000)]
    """Position of the call in the answer: 0 is the first call, 1 the second."""


def _declared_type(answer: Answer, tool: str, arg: str, found: Any) -> Outcome | None:
    """A failed outcome when the offered tool declares ``arg`` of a type ``found`` is not (5.0 for an integer)."""
    properties = declared(answer.tools, tool)
    problem = type_problem(found, properties.get(arg)) if properties is not None else None
    return Outcome.fail(f"{arg} is {compact(found)}: {problem}") if problem else None


def _calls(answer: Answer) -> str:
    return ", ".join(c.name for c in answer.tool_calls) or "none"


class ToolCalled(CheckType[ToolNameParams]):
    """Pass when the first tool call is of the tool `value`."""

    name = "tool_called"
    roles = frozenset({"expects_call", "names_tool"})
    params_model = ToolNameParams
    example: ClassVar[Mapping[str, Any]] = {"value": "find_customer", "weight": 2}

    def evaluate(self, answer: Answer) -> Outcome:
        call = answer.first_call
        if call is None:
            detail = "no tool call" + (f"; answered {answer.text[:40]!r}" if answer.text else "")
            return Outcome.fail(detail)
        return Outcome.check(call.name == self.params.value, f"called {call.name}, expected {self.params.value}")


class ToolNotCalled(CheckType[OptionalToolNameParams]):
    """Pass when no tool is called (or, with `value`, when that tool is not called), in tool_calls or in the text."""

    name = "tool_not_called"
    roles = frozenset({"forbids_call", "counts_calls"})
    params_model = OptionalToolNameParams
    example: ClassVar[Mapping[str, Any]] = {"value": "send_email"}

    def evaluate(self, answer: Answer) -> Outcome:
        banned = self.params.value
        in_text = text_tool_call(answer.text) if answer.tools else None
        if in_text is not None and (banned is None or in_text in (banned, "")):
            # A call the server failed to decode is still a call: never credited as an abstention.
            return Outcome.fail(f"a call of {in_text or 'a tool'} is written in the answer text")
        if banned is None:
            return Outcome.check(not answer.tool_calls, f"tool calls: {_calls(answer)}")
        made = any(call.name == banned for call in answer.tool_calls)
        return Outcome.check(not made, f"{banned} {'called' if made else 'not called'} (calls: {_calls(answer)})")


class ToolArgEquals(CheckType[ArgEqualsParams]):
    """Pass when argument `arg` of the first tool call equals `value` (JSON-typed equality)."""

    name = "tool_arg_equals"
    roles = frozenset({"judges_arguments"})
    params_model = ArgEqualsParams
    example: ClassVar[Mapping[str, Any]] = {"arg": "append", "value": True, "weight": 3}

    def evaluate(self, answer: Answer) -> Outcome:
        found, call, problem = first_call_argument(answer, self.params.arg_path)
        if problem or call is None:
            return problem or Outcome.fail("no tool call")
        want = self.params.value
        if problem := _declared_type(answer, call.name, self.params.arg, found):
            return problem
        return Outcome.check(
            json_equal(found, want), f"{self.params.arg} is {compact(found)}, expected {compact(want)}"
        )


class ToolArgRegex(CheckType[ArgRegexParams]):
    """Pass when the pattern `value` is found in argument `arg` of the first tool call."""

    name = "tool_arg_regex"
    roles = frozenset({"judges_arguments"})
    params_model = ArgRegexParams
    example: ClassVar[Mapping[str, Any]] = {"arg": "name", "value": r"\bdaniel\s+hughes\b"}

    def evaluate(self, answer: Answer) -> Outcome:
        found, _call, problem = first_call_argument(answer, self.params.arg_path)
        if problem:
            return problem
        text = found if isinstance(found, str) else json.dumps(found, ensure_ascii=False, separators=(",", ":"))
        ok = self.params.pattern.search(text)
        return Outcome.check(
            ok, f"{self.params.arg} {compact(found)} {'matches' if ok else 'does not match'} /{self.params.value}/"
        )


class ToolCallCount(CheckType[CallCountParams]):
    """Pass when the answer makes exactly `value` tool calls (or at least `value`, with `mode` "at_least")."""

    name = "tool_calls_count"
    roles = frozenset({"expects_call", "counts_calls"})
    params_model = CallCountParams
    example: ClassVar[Mapping[str, Any]] = {"value": 2, "mode": "exactly"}

    def evaluate(self, answer: Answer) -> Outcome:
        made, want = len(answer.tool_calls), self.params.value
        broken = next((c for c in answer.tool_calls if c.repaired or c.arguments_problem), None)
        if self.params.well_formed and broken is not None:
            why = broken.arguments_problem or "arguments that were not valid JSON as written"
            return Outcome.fail(f"{broken.name} has {why}")
        ok = made == want if self.params.mode == "exactly" else made >= want
        wording = "" if self.params.mode == "exactly" else "at least "
        return Outcome.check(ok, f"{made} tool call(s) ({_calls(answer)}), expected {wording}{want}")


class ToolCallAt(CheckType[CallAtParams]):
    """Pass when the answer's tool call at position `index` (0 = first) is of the tool `value`."""

    name = "tool_call_at"
    roles = frozenset({"expects_call", "counts_calls"})
    params_model = CallAtParams
    example: ClassVar[Mapping[str, Any]] = {"index": 1, "value": "get_weather"}

    def evaluate(self, answer: Answer) -> Outcome:
        index = self.params.index
        if index >= len(answer.tool_calls):
            return Outcome.fail(f"no tool call at index {index} (calls: {_calls(answer)})")
        made = answer.tool_calls[index].name
        return Outcome.check(made == self.params.value, f"call {index} is {made}, expected {self.params.value}")


class ToolArgAt(CheckType[ArgAtParams]):
    """Pass when argument `arg` of the tool call at position `index` (0 = first) equals `value` (JSON-typed)."""

    name = "tool_arg_at"
    roles = frozenset({"expects_call", "judges_arguments"})
    params_model = ArgAtParams
    example: ClassVar[Mapping[str, Any]] = {"index": 1, "arg": "city", "value": "Oslo"}

    def evaluate(self, answer: Answer) -> Outcome:
        index = self.params.index
        if index >= len(answer.tool_calls):
            return Outcome.fail(f"no tool call at index {index} (calls: {_calls(answer)})")
        call = answer.tool_calls[index]
        found, _call, problem = first_call_argument(replace(answer, tool_calls=(call,)), self.params.arg_path)
        if problem:
            return problem
        want = self.params.value
        if problem := _declared_type(answer, call.name, self.params.arg, found):
            return problem
        return Outcome.check(
            json_equal(found, want), f"call {index} {self.params.arg} is {compact(found)}, expected {compact(want)}"
        )
