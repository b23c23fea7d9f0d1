"""A check type that matches the answer's tool calls as a set: each expected call by a call of its own, in any order."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from tsuka_checks_builtin.argmatch import Declared, argument_misfit, declared_of
from tsuka_checks_builtin.argsem import declared, required, type_problem
from tsuka_checks_builtin.json import compact
from tsuka_checks_builtin.sourcetext import kind_of, read_source
from tsuka_core import Answer, CheckParams, CheckType, Outcome, ToolCall

__all__ = ["ToolCallsMatch"]


class ReadAs(CheckParams):
    """An argument the model writes as source text in a string, read by the type it has in that language."""

    language: Literal["java", "javascript"]
    """The language of the source text."""
    type: str
    """Its type there: Java byte, short, integer, long, float, double, boolean, char, String, any, Array,
    ArrayList, HashMap; JavaScript String, integer, Bigint, float, Boolean, any, array, dict."""
    items: str | None = None
    """An array's item type (a type of the same language)."""

    def model_post_init(self, context: Any, /) -> None:
        """Refuse a type the language's reader does not read."""
        for name in (self.type, self.items):
            if name is not None and kind_of(self.language, name) is None:
                raise ValueError(f"{name!r} is not a {self.language} type tsuka reads")


class ExpectedCall(CheckParams):
    """One call the answer must make: the tool, and what its arguments must hold."""

    name: str
    """The tool's name (case-sensitive)."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Top-level arguments and the JSON value expected in each (typed: true is not "true")."""
    accept: dict[str, Annotated[list[Any], Field(min_length=1)]] = Field(default_factory=dict)
    """Top-level arguments and the values accepted in each: any one of them passes."""
    optional: list[str] = Field(default_factory=list)
    """Arguments that may be absent; when present, they must hold what `arguments` or `accept` says."""
    read_as: dict[str, ReadAs] = Field(default_factory=dict)
    """Arguments written as Java or JavaScript source text in a string ("50L", "new int[]{1, 2}"), each read by
    its type in that language before it is judged (as BFCL's checker reads them); a value that is no string
    fails, text that does not read as that type stays text."""

    def model_post_init(self, context: Any, /) -> None:
        """Refuse an argument named in both `arguments` and `accept`."""
        both = sorted(set(self.arguments) & set(self.accept))
        if both:
            raise ValueError(f"{', '.join(both)}: give an argument in arguments or in accept, not both")


class CallsMatchParams(CheckParams):
    """The calls expected in one answer, in any order."""

    calls: Annotated[list[ExpectedCall], Field(min_length=1, max_length=16)]
    """Each expected call; two equal entries need two calls."""
    exact: bool = True
    """True (the default): no call beyond the expected ones; false: other calls may be made too."""
    only_named: bool = False
    """True: a call may carry no argument beyond those its expected call gives a value for in `arguments` or
    `accept` (BFCL's rule); one `optional` alone names may then only be absent."""
    normalize: bool = False
    """True: strings are compared as BFCL compares them (without spaces or ,./-_*^, case folded, ' read as "),
    where BFCL compares them so: a string argument, the strings of an array, an object's string values; a
    value of another type than declared (a variable's name) as written."""


class ToolCallsMatch(CheckType[CallsMatchParams]):
    """Pass when every expected call is made by a distinct tool call, in any order (BFCL's parallel matching).

    An argument matches when it holds the value of `arguments`, or one of `accept`, with the type the
    offered tool declares for it (an integer refuses 5.0, a number takes 5, unless the test itself accepts a
    value of that kind); an argument the tool does not declare never matches, one it requires is never
    absent, and another may be absent only when `optional` names it. A call whose arguments are not
    valid JSON as the model wrote them (repaired, or unreadable), or an answer cut at the token limit,
    matches nothing: a server could not run it.
    """

    name = "tool_calls_match"
    roles = frozenset[str]()
    params_model = CallsMatchParams
    example: ClassVar[Mapping[str, Any]] = {
        "calls": [
            {"name": "get_weather", "arguments": {"city": "Paris"}, "accept": {"unit": ["celsius", "C"]}},
            {"name": "get_weather", "arguments": {"city": "Rome"}, "optional": ["unit"]},
        ],
        "exact": True,
        "only_named": True,
        "weight": 2,
    }

    def evaluate(self, answer: Answer) -> Outcome:
        expected, made = self.params.calls, answer.tool_calls
        if answer.cut:
            return Outcome.fail("answer cut at the token limit: its calls are not judged")
        if self.params.exact and len(made) != len(expected):
            return Outcome.fail(f"{len(made)} tool call(s) ({_names(made)}), expected {len(expected)}")

        def fits(wanted: ExpectedCall, call: ToolCall) -> bool:
            return _misfit(wanted, call, self.params, answer.tools) is None

        if _match(expected, made, fits) is not None:
            return Outcome.check(True, f"each expected call made, in any order (calls: {_names(made)})")
        missing = next((e for e in expected if not any(fits(e, call) for call in made)), None)
        if missing is None:
            return Outcome.fail(_ambiguous(made))
        whys = [f"call {i} {w}" for i, c in enumerate(made) if (w := _misfit(missing, c, self.params, answer.tools))]
        reason = f": {'; '.join(whys[:3])}" if whys else ""
        return Outcome.fail(f"no call matches {_shown(missing)}{reason} (calls: {_names(made)})")


def _misfit(
    expected: ExpectedCall, call: ToolCall, params: CallsMatchParams, tools: Sequence[Mapping[str, Any]]
) -> str | None:
    """Why ``call`` does not make ``expected`` (first reason found), or None when it does."""
    if call.name != expected.name:
        return f"is {call.name}"
    if call.arguments_problem or not isinstance(call.arguments, dict):
        return f"has {call.arguments_problem}" if call.arguments_problem else "has arguments that are not an object"
    if call.repaired:
        return "has arguments that were not valid JSON as written"
    properties = declared(tools, call.name)
    named = {**{k: [v] for k, v in expected.arguments.items()}, **expected.accept}
    for key, value in call.arguments.items():
        if properties is not None and key not in properties:
            return f"has {key}, an argument the tool does not declare"
        if params.only_named and key not in named:
            return f"has {key}, not an expected argument"
        problem = _argument_problem(expected, key, value, named.get(key), properties, params.normalize)
        if problem is not None:
            return f"has {key} {compact(value)}" + (f": {problem}" if problem else "")
    unsent = [key for key in required(tools, call.name) if key not in call.arguments]
    if unsent:
        return f"lacks {unsent[0]}, which the tool requires"
    absent = [key for key in named if key not in call.arguments and key not in expected.optional]
    return f"lacks {absent[0]}" if absent else None


def _argument_problem(
    expected: ExpectedCall,
    key: str,
    value: Any,
    accepted: list[Any] | None,
    properties: Mapping[str, Any] | None,
    normalize: bool,
) -> str | None:
    """Why one argument is not right: of another type than declared, or no accepted value; None when right."""
    schema = properties.get(key) if properties is not None else None
    reading = expected.read_as.get(key)
    if reading is not None:
        if not isinstance(value, str):
            return f"is {reading.language} source text to be given as a string"
        try:
            value = read_source(value, reading.language, reading.type, reading.items)
        except ValueError as exc:
            return str(exc)
        items = kind_of(reading.language, reading.items) if reading.items else None
        kind = Declared(kind_of(reading.language, reading.type), items)
    else:
        kind = declared_of(schema)
    if accepted is None:
        return type_problem(value, {"type": kind.kind} if reading is not None else schema)
    return argument_misfit(value, accepted, kind, normalize=normalize, optional=key in expected.optional)


def _match(
    expected: Sequence[ExpectedCall], made: Sequence[ToolCall], fits: Callable[[ExpectedCall, ToolCall], bool]
) -> list[int] | None:
    """A distinct call for each expected one (their indexes), by backtracking; None when there is no such choice."""
    chosen: list[int] = []

    def place(i: int) -> bool:
        if i == len(expected):
            return True
        for index, call in enumerate(made):
            if index not in chosen and fits(expected[i], call):
                chosen.append(index)
                if place(i + 1):
                    return True
                chosen.pop()
        return False

    return chosen if place(0) else None


def _names(made: Sequence[ToolCall]) -> str:
    return ", ".join(c.name for c in made) or "none"


def _shown(expected: ExpectedCall) -> str:
    args = [f"{k}={compact(v)}" for k, v in expected.arguments.items()]
    args += [f"{k}={'|'.join(compact(v) for v in values)}" for k, values in expected.accept.items()]
    return f"{expected.name}({', '.join(args)})"


def _ambiguous(made: Sequence[ToolCall]) -> str:
    return f"each expected call matches some call, but not each a call of its own (calls: {_names(made)})"
