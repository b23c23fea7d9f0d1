"""The lenient read every stored record gets: each field on its own, a damaged one read as None and remembered.

A profile store or a history is a file anyone may edit and another tool shares,
so a field that does not hold its type does not spoil the others: it reads as
None and is kept, with the value found, in :attr:`Lenient.damaged`, for readers
that must say what was there. Unknown keys are kept too (``model_extra``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictFloat,
    StrictInt,
    TypeAdapter,
    ValidationError,
    ValidatorFunctionWrapHandler,
    model_validator,
)
from pydantic.alias_generators import to_camel

__all__ = [
    "MAX_COUNT",
    "MAX_MILLIS",
    "MAX_RATE",
    "Count",
    "Interval",
    "Lenient",
    "Millis",
    "Number",
    "Rate",
    "Share",
    "Tokens",
    "interval_or_none",
    "is_share",
]

Number = StrictInt | StrictFloat
"""A JSON number: ``true`` is not one, nor ``"1"``."""
Share = Annotated[Number, Field(ge=0, le=1, allow_inf_nan=False)]
"""A number from 0 to 1."""


def _ordered(pair: tuple[float, float]) -> tuple[float, float]:
    if pair[0] > pair[1]:
        raise ValueError("the low end is above the high end")
    return float(pair[0]), float(pair[1])


MAX_COUNT = 10_000_000
"""The largest count taken as measured: tokens of one answer, answers, calls."""
MAX_MILLIS = 86_400_000
"""The longest time taken as measured, in milliseconds: a day."""
MAX_RATE = 1e12
"""The fastest rate a record may hold, tokens per second (far past any server's)."""

Rate = Annotated[Number, Field(ge=0, le=MAX_RATE, allow_inf_nan=False)]
"""Tokens per second, from 0 to :data:`MAX_RATE`."""
Tokens = Annotated[Number, Field(ge=0, le=MAX_COUNT, allow_inf_nan=False)]
"""A token count per answer, from 0 to :data:`MAX_COUNT`."""

Count = Annotated[StrictInt, Field(ge=0, le=MAX_COUNT)]
"""A whole number of things counted (answers, calls, tokens in all), from 0 to :data:`MAX_COUNT`."""
Millis = Annotated[Number, Field(ge=0, le=MAX_MILLIS, allow_inf_nan=False)]
"""A time in milliseconds, from 0 to :data:`MAX_MILLIS` (a day)."""

Interval = Annotated[tuple[Share, Share], AfterValidator(_ordered)]
"""A 95% interval ``[lo, hi]`` of a score, ``lo <= hi``."""
_INTERVAL: TypeAdapter[tuple[float, float]] = TypeAdapter(Interval)


class Lenient(BaseModel):
    """A stored object read field by field: a field of the wrong kind is None and remembered as damaged."""

    model_config = ConfigDict(
        frozen=True, alias_generator=to_camel, populate_by_name=True, extra="allow", use_attribute_docstrings=True
    )

    objects_only: ClassVar[bool] = False
    """True for an object nested in another: a value that is not an object is damage to the field holding it."""

    _damaged: dict[str, Any] = PrivateAttr(default_factory=dict)
    _found: frozenset[str] = PrivateAttr(default=frozenset())
    _is_object: bool = PrivateAttr(default=True)

    @model_validator(mode="wrap")
    @classmethod
    def _per_field(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """Validate ``data``; drop each field that fails (remembering it) and validate the rest again."""
        if isinstance(data, cls):
            return data
        is_object = isinstance(data, Mapping)
        if not is_object and cls.objects_only:
            raise ValueError("not an object")
        values: dict[str, Any] = {str(k): v for k, v in data.items()} if isinstance(data, Mapping) else {}
        found, damaged = frozenset(values), dict[str, Any]()
        while True:
            try:
                model = handler(values)
                break
            except ValidationError as exc:
                bad = {str(e["loc"][0]) for e in exc.errors() if e["loc"] and str(e["loc"][0]) in values}
                if not bad:
                    raise
                damaged.update((k, values.pop(k)) for k in bad)
        model._damaged, model._found, model._is_object = damaged, found, is_object
        return model

    @classmethod
    def parse(cls, value: object) -> Self:
        """``value`` (any JSON value from the store) as this model; never raises for what JSON can hold."""
        return cls.model_validate(value, by_alias=True, by_name=False)

    @property
    def is_object(self) -> bool:
        """Whether the stored value was a JSON object at all."""
        return self._is_object

    @property
    def damaged(self) -> Mapping[str, Any]:
        """The fields present but not of their type, by stored (camelCase) name, with the value found."""
        return self._damaged

    def stored(self) -> dict[str, Any]:
        """As JSON: the fields set, in their order, then any other key kept."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)

    def has(self, name: str) -> bool:
        """Whether the stored object holds the key ``name`` (camelCase), whatever its value."""
        return name in self._found

    def found(self, name: str) -> Any:
        """The value stored under ``name`` (camelCase): typed when valid, as found when damaged; None when absent."""
        if name in self._damaged:
            return self._damaged[name]
        field = next((f for f, info in type(self).model_fields.items() if info.alias == name), None)
        if field is not None:
            return getattr(self, field)
        return (self.model_extra or {}).get(name)


def interval_or_none(value: object) -> tuple[float, float] | None:
    """``value`` as an :data:`Interval`, or None when it is not one."""
    try:
        return _INTERVAL.validate_python(value)
    except ValidationError:
        return None


def is_share(value: object) -> bool:
    """Whether ``value`` is a JSON number from 0 to 1."""
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1
