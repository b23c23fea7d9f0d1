"""How a test file's problems are worded: the base model that words each error as it validates.

Each format model words the errors of its own keys, so every error leaving it
is final and nested models' errors pass through as they are. Every problem is
kept: a model's rules about its keys are checked beside its fields, not after
them, so one mistake never hides another.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from tsuka_core.judge.jsontools import json_type_name

if TYPE_CHECKING:
    from typing import Self

    from pydantic import ModelWrapValidatorHandler
    from pydantic.fields import FieldInfo
    from pydantic_core import ErrorDetails

__all__ = ["WORDED", "FormatModel", "input_kind", "location", "problem", "problems_error", "suggest"]

WORDED = "test_file"
"""The error type of a worded problem: its message is final."""

Loc = tuple[str | int, ...]

_TYPE_WORDS = {
    "string_type": "a string",
    "float_type": "a number",
    "int_type": "an integer",
    "bool_type": "a boolean",
    "dict_type": "an object",
    "model_type": "an object",
    "list_type": "an array",
    "tuple_type": "an array",
}


def suggest(word: str, choices: Sequence[str]) -> str:
    """``; did you mean 'x'?`` for the choice closest to ``word``, or nothing when none is close."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def input_kind(value: Any) -> str:
    """The JSON type of a value as written: 2.0 is a number, 2 an integer."""
    return "number" if isinstance(value, float) else json_type_name(value)


def location(loc: Sequence[str | int]) -> str:
    """A JSON location as a test file's author reads it: ``steps[1].checks[0].type``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text


def problem(loc: Loc, message: str, value: Any = None) -> InitErrorDetails:
    """A worded problem at ``loc`` (relative to the model being validated)."""
    return {"type": PydanticCustomError(WORDED, message), "loc": loc, "input": value}


def problems_error(title: str, problems: list[InitErrorDetails]) -> ValidationError:
    """``problems`` as one ValidationError; raised in a validator, pydantic prefixes the outer location."""
    return ValidationError.from_exception_data(title, problems)


def _number(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() and abs(value) < 1e15 else str(value)


def _choices(field: FieldInfo) -> tuple[str, ...]:
    annotation = field.annotation
    return tuple(str(c) for c in get_args(annotation)) if get_origin(annotation) is Literal else ()


def _field_message(error: ErrorDetails, field: FieldInfo, expected: str | None) -> str:
    """The message of one error of a field's value."""
    kind, value, ctx = error["type"], error["input"], error.get("ctx", {})
    choices = _choices(field)
    if choices:
        expected = f"one of {', '.join(choices)}" if len(choices) > 1 else repr(choices[0])
    what = expected or _TYPE_WORDS.get(kind, "a valid value")
    if kind in ("missing", "too_short"):
        return f"required, {what}"
    if kind in ("string_too_short", "string_pattern_mismatch"):
        return "must not be empty"
    if kind == "literal_error":
        got = repr(value) if isinstance(value, str) else input_kind(value)
        return f"must be {what}, got {got}{suggest(value, choices) if isinstance(value, str) else ''}"
    if kind == "greater_than":
        return f"must be > {_number(ctx['gt'])}, got {_number(value)}"
    if kind == "less_than_equal":
        return f"must be at most {_number(ctx['le'])}, got {_number(value)}"
    if kind == "finite_number":
        return f"must be a finite number, got {value}"
    if kind.endswith("_type"):
        return f"must be {what}, got {input_kind(value)}"
    return str(error["msg"])


class FormatModel(BaseModel):
    """Base of the test-file format's models: frozen, unknown keys refused, problems worded.

    A subclass says how a value that is not an object is described
    (``not_an_object``), what each key's value must be when its type does not
    say it well (``expected``, by key), and may add ``rules`` about its keys.
    """

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        use_attribute_docstrings=True,
        field_title_generator=lambda name, field: field.alias or name,
    )

    not_an_object: ClassVar[str] = "must be an object"
    expected: ClassVar[Mapping[str, str]] = {}

    @classmethod
    def file_keys(cls) -> list[str]:
        """The keys a file may write in this object."""
        return [field.alias or name for name, field in cls.model_fields.items()]

    @classmethod
    def rules(cls, data: Mapping[str, Any]) -> list[InitErrorDetails]:
        """Problems of this object's keys that its fields' types do not express."""
        return []

    @classmethod
    def worded(cls, error: ErrorDetails) -> InitErrorDetails | None:
        """One error of this model's validation, worded for the file's author (None: another says it)."""
        loc: Loc = tuple(error["loc"])
        if error["type"] == WORDED:
            return problem(loc, error["msg"], error["input"])
        if not loc:
            return problem(loc, f"{cls.not_an_object}, got {input_kind(error['input'])}", error["input"])
        key = str(loc[0])
        if error["type"] == "extra_forbidden":
            return problem(loc, f"unknown key{suggest(key, cls.file_keys())}", error["input"])
        field = next((f for n, f in cls.model_fields.items() if (f.alias or n) == key), None)
        message = _field_message(error, field, cls.expected.get(key)) if field else str(error["msg"])
        return problem(loc, message, error["input"])

    @classmethod
    def validated(
        cls,
        data: Any,
        handler: ModelWrapValidatorHandler[Self],
        *,
        first: list[InitErrorDetails],
        last: list[InitErrorDetails],
    ) -> Self:
        """Validate ``data`` and raise every problem at once: unknown keys, ``first``, the fields', ``last``."""
        try:
            value = handler(data)
        except ValidationError as exc:
            worded = [(e["type"] == "extra_forbidden", cls.worded(e)) for e in exc.errors()]
            unknown = [p for is_unknown, p in worded if is_unknown and p is not None]
            others = [p for is_unknown, p in worded if not is_unknown and p is not None]
            raise problems_error(cls.__name__, [*unknown, *first, *others, *last]) from None
        if first or last:
            raise problems_error(cls.__name__, [*first, *last])
        return value

    @model_validator(mode="wrap")
    @classmethod
    def _worded(cls, data: Any, handler: ModelWrapValidatorHandler[Self], info: ValidationInfo) -> Self:
        rules = cls.rules(data) if isinstance(data, dict) else []
        return cls.validated(data, handler, first=rules, last=[])
