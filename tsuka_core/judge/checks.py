"""The check-type base class, its parameter models, and the helpers every check uses."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from tsuka_core.judge.answer import Answer, ToolCall
from tsuka_core.judge.jsontools import MISSING, JsonPath, extract_json
from tsuka_core.judge.outcome import Outcome
from tsuka_core.judge.patterns import KNOWN_FLAGS, Pattern, PatternTimeout

__all__ = [
    "CUT",
    "REPAIRED",
    "ROLES",
    "ArgParams",
    "CheckParams",
    "CheckType",
    "Count",
    "NoParams",
    "PathParams",
    "RegexParams",
    "check_roles",
    "describe",
    "first_call_argument",
    "json_at_path",
    "run_check",
]

P = TypeVar("P", bound="CheckParams")

CUT = "answer cut at the token limit: what it wrote is not judged as JSON or as arguments"
"""Why no JSON or argument check passes an answer the server stopped at the token limit."""
REPAIRED = "arguments were not valid JSON as written (json-repair's reading is not judged)"
"""Why no argument check passes a call whose arguments had to be repaired."""


Count = Annotated[int, Field(ge=0, le=1_000_000)]
"""A count a check's parameter states (words, lines, calls): a whole number from 0 to 1,000,000."""


class CheckParams(BaseModel):
    """Base of every check type's parameters: frozen, strict, unknown keys rejected.

    The docstring written under a field is its description in the JSON Schema
    (pydantic's ``use_attribute_docstrings``); a subclass may turn it off.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, use_attribute_docstrings=True)


class NoParams(CheckParams):
    """A check type that takes no parameters."""


class RegexParams(CheckParams):
    """A pattern in ``value`` with JavaScript-style ``flags``, compiled when the suite loads."""

    value: str
    """The regular expression."""
    flags: str = ""
    """Any of i (ignore case), m (multi-line), s (dot matches newline); g and u change nothing."""

    _pattern: Pattern = PrivateAttr()

    @field_validator("value")
    @classmethod
    def _compiles(cls, value: str) -> str:
        Pattern.compile(value)  # syntax is checked here so the error points at `value`
        return value

    @field_validator("flags")
    @classmethod
    def _known_flags(cls, flags: str) -> str:
        unknown = sorted({f for f in flags if f not in KNOWN_FLAGS})
        if unknown:
            raise ValueError(f"unknown regex flag(s) {''.join(unknown)!r}; use any of {KNOWN_FLAGS!r}")
        return flags

    @model_validator(mode="after")
    def _compile(self) -> RegexParams:
        self._pattern = Pattern.compile(self.value, self.flags)
        return self

    @property
    def pattern(self) -> Pattern:
        """The compiled, time-limited pattern."""
        return self._pattern


class PathParams(CheckParams):
    """A JMESPath ``path`` into the JSON of the answer, compiled when the suite loads."""

    path: str
    """A JMESPath expression; a dotted path such as ``items[0].name`` is one."""

    _compiled: JsonPath = PrivateAttr()

    @field_validator("path")
    @classmethod
    def _path_compiles(cls, path: str) -> str:
        JsonPath(path)
        return path

    @model_validator(mode="after")
    def _compile_path(self) -> PathParams:
        self._compiled = JsonPath(self.path)
        return self

    @property
    def json_path(self) -> JsonPath:
        """The compiled path."""
        return self._compiled


class ArgParams(CheckParams):
    """An ``arg`` of the first tool call: a top-level name taken literally, else a JMESPath expression."""

    arg: str
    """Argument name (``file-name`` works as written) or a JMESPath expression (``options.mode``)."""

    _compiled: JsonPath = PrivateAttr()

    @field_validator("arg")
    @classmethod
    def _arg_compiles(cls, arg: str) -> str:
        if not arg:
            raise ValueError("must not be empty")
        JsonPath(arg, literal_key=True)
        return arg

    @model_validator(mode="after")
    def _compile_arg(self) -> ArgParams:
        self._compiled = JsonPath(self.arg, literal_key=True)
        return self

    @property
    def arg_path(self) -> JsonPath:
        """The compiled argument reference."""
        return self._compiled


class CheckType(Generic[P]):
    """Base of every check type: a name, a parameter model, and ``evaluate``.

    Subclasses set ``name`` and ``params_model`` and implement ``evaluate``,
    which returns an :class:`Outcome` (a wrong answer is ``failed``, never an
    exception). The class docstring's first line is the type's description.
    """

    name: ClassVar[str]
    params_model: ClassVar[type[CheckParams]] = NoParams
    example: ClassVar[Mapping[str, Any] | None] = None
    """One check as written in a test file (``{"type": ..., ...}``), shown in the generated docs."""
    roles: ClassVar[frozenset[str] | None] = None
    """What its failure tells the engine, which names the kind of a failed answer from it (docs/plugins.md):
    ``expects_call`` (failing without a call means the model abstained), ``forbids_call``, ``counts_calls``,
    ``judges_arguments``, ``names_tool`` (its ``value`` is the tool expected). None: 0.2's reading by name."""

    def __init__(self, params: P) -> None:
        self.params = params

    def evaluate(self, answer: Answer) -> Outcome:
        """Judge one answer."""
        raise NotImplementedError

    def advice(self, others: Sequence[str]) -> str | None:
        """A hint to the test's author that ``tsuka validate`` prints; None (the default) when there is nothing to say.

        ``others`` are the type names of the test's other checks. A check whose
        meaning is easy to mistake says so here (``json_valid`` passes JSON found
        anywhere, unless paired with a check of the whole answer).
        """
        del others
        return None


ROLES = ("expects_call", "forbids_call", "counts_calls", "judges_arguments", "names_tool")
"""Every role a check type may declare (:attr:`CheckType.roles`)."""


def check_roles(check_type: type[CheckType[Any]]) -> frozenset[str]:
    """The roles ``check_type`` declares; one declaring none is read as 0.2 read it (``tool_arg*`` judges arguments)."""
    if check_type.roles is not None:
        return check_type.roles
    return frozenset({"judges_arguments"}) if check_type.name.startswith("tool_arg") else frozenset()


def describe(check_type: type[CheckType[Any]]) -> str:
    """The first line of a check type's (or any class's) docstring."""
    doc = inspect.getdoc(check_type) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def run_check(check: CheckType[Any], answer: Answer) -> Outcome:
    """Evaluate ``check`` on ``answer``; a time-out or an exception becomes ``errored``."""
    try:
        outcome = check.evaluate(answer)
    except PatternTimeout as exc:
        return Outcome.error(str(exc))
    except RecursionError:
        return Outcome.error("input nested too deeply to evaluate")
    except Exception as exc:  # a plugin bug must not end the run: errored, shown apart
        return Outcome.error(f"{check.name} raised {type(exc).__name__}: {exc}".splitlines()[0])
    if not isinstance(outcome, Outcome):
        return Outcome.error(f"{check.name} returned {type(outcome).__name__}, not an Outcome")
    return outcome


def json_at_path(answer: Answer, path: JsonPath | str) -> tuple[Any, Outcome | None]:
    """The value at ``path`` in the answer's JSON, or a failed outcome saying why there is none.

    The JSON is taken as :func:`extract_json` takes it, and ``path`` (a
    :class:`JsonPath`, or a text compiled into one) is a dotted path or a
    JMESPath expression, searched within the built-ins' time bound. Returns
    ``(value, None)``, or ``(MISSING, Outcome.fail(...))``; an answer cut at the
    token limit (:attr:`Answer.cut`) has no JSON to judge. Raises ValueError for
    a path that does not compile.
    """
    path = path if isinstance(path, JsonPath) else JsonPath(path)
    if answer.cut:
        return MISSING, Outcome.fail(CUT)
    extracted = extract_json(answer.text)
    if extracted is None:
        return MISSING, Outcome.fail("no JSON found in the answer")
    value = path.find(extracted.value)
    if value is MISSING:
        return MISSING, Outcome.fail(f"nothing at path {path.text!r}")
    return value, None


def first_call_argument(answer: Answer, arg: JsonPath | str) -> tuple[Any, ToolCall | None, Outcome | None]:
    """The first tool call's argument ``arg``, or a failed outcome saying why there is none.

    ``arg`` is a :class:`JsonPath` or a text compiled into one, where a text
    free of path syntax is one argument name as written (``file-name``).
    Returns ``(value, call, None)``, or ``(MISSING, call or None, Outcome.fail(...))``: arguments that were not
    valid JSON as the model wrote them (:attr:`ToolCall.repaired`) and an answer cut at the token limit
    (:attr:`Answer.cut`) have no argument to judge.
    """
    arg = arg if isinstance(arg, JsonPath) else JsonPath(arg, literal_key=True)
    call = answer.first_call
    if call is None:
        return MISSING, None, Outcome.fail("no tool call")
    if call.arguments_problem:
        return MISSING, call, Outcome.fail(f"{call.name}: {call.arguments_problem}")
    if answer.cut:
        return MISSING, call, Outcome.fail(CUT)
    if call.repaired:
        return MISSING, call, Outcome.fail(f"{call.name}: {REPAIRED}")
    value = arg.find(call.arguments)
    if value is MISSING:
        return MISSING, call, Outcome.fail(f"{call.name} has no argument {arg.text!r}")
    return value, call, None
