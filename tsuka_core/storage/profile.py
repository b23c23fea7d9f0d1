"""A stored profile as typed models, parsed once where the store is read, each field on its own.

The store is a file anyone may edit and another tool shares, so a field that
does not hold its type does not spoil the others: it reads as None and is kept,
with the value found, in :attr:`Lenient.damaged`, for readers that must say what
was there. Unknown keys are kept too (``model_extra``); the store itself is
written back from the raw JSON, never from these models.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any

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
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from tsuka_core.terms import Tier

__all__ = ["BENCHMARK_VERSION", "Interval", "Lenient", "Number", "Profile", "Share", "StoredTestResult"]

BENCHMARK_VERSION = 5
"""This engine's benchmark version; profiles of any other version are stale."""

Number = StrictInt | StrictFloat
"""A JSON number: ``true`` is not one, nor ``"1"``."""
Share = Annotated[Number, Field(ge=0, le=1, allow_inf_nan=False)]
"""A number from 0 to 1."""


def _ordered(pair: tuple[float, float]) -> tuple[float, float]:
    if pair[0] > pair[1]:
        raise ValueError("the low end is above the high end")
    return float(pair[0]), float(pair[1])


Rate = Annotated[Number, Field(ge=0, le=1e12, allow_inf_nan=False)]
"""Tokens per second as the history reads them (``storage.history_values.MAX_RATE``)."""
Tokens = Annotated[Number, Field(ge=0, le=10_000_000, allow_inf_nan=False)]
"""A token count per answer (``backends.plausible.MAX_TOKEN_COUNT``)."""

Interval = Annotated[tuple[Share, Share], AfterValidator(_ordered)]
"""A 95% interval ``[lo, hi]`` of a score, ``lo <= hi``."""
_INTERVAL: TypeAdapter[tuple[float, float]] = TypeAdapter(Interval)


class Lenient(BaseModel):
    """A stored object read field by field: a field of the wrong kind is None and remembered as damaged."""

    model_config = ConfigDict(
        frozen=True, alias_generator=to_camel, populate_by_name=True, extra="allow", use_attribute_docstrings=True
    )

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
    def parse(cls, value: object) -> Any:
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


class StoredTestResult(Lenient):
    """One entry of a profile's ``testResults``: a test's name, category and score (the mean of its runs)."""

    name: str | None = None
    category: str | None = None
    score: Share | None = None
    """The score the level counted: with repeats, the mean of ``runs``."""
    spread: Share | None = None
    """With repeats: how far the runs' scores lie apart."""
    runs: list[Share] | None = None
    """With repeats: each run's score, in repeat order."""

    @property
    def usable(self) -> bool:
        """Whether it has what a comparison needs: a name, a category and a numeric score."""
        return self.name is not None and self.category is not None and self.score is not None

    @property
    def run_scores(self) -> tuple[float, ...]:
        """Each run's score; the score alone when ``runs`` is absent, empty or damaged."""
        if self.runs:
            return tuple(float(r) for r in self.runs)
        return () if self.score is None else (float(self.score),)


class Profile(Lenient):
    """One stored profile: TSUKA's fields, then this engine's own; every field may be absent or damaged."""

    model: str | None = None
    """The model measured, as the backend names it."""
    provider: str | None = None
    """The base URL measured (credentials removed) or the backend name."""
    tier: Tier | None = None
    """small, medium or large; an entry without one of them is not a profile."""
    scores: dict[str, Share] | None = None
    """Each category's score from 0 to 1 (a category whose score is not a number from 0 to 1 is left out)."""
    tokens_per_second: Rate | None = None
    tested_at: str | None = None
    """When it was measured, as ISO 8601 UTC with milliseconds."""
    benchmark_version: Number | None = None
    """The benchmark version that measured it; another than :data:`BENCHMARK_VERSION` makes it stale."""
    tests_hash: str | None = None
    """The hash of the suite measured with; another than the suite's hash now makes it stale."""
    test_results: list[StoredTestResult] | None = None
    reasoning_effort: str | None = None
    avg_completion_tokens: Tokens | None = None
    backend: str | None = None
    """This engine's backend name (openai, embedded...)."""
    suite: str | None = None
    """The suite measured with: a registered name (``default``, ``extended``...) or a folder's full path."""
    repeats: StrictInt | None = None
    """How many times each test was run, when more than once."""
    tier_confidence: Share | None = None
    """The share of bootstrap resamples giving the stored tier."""
    intervals: dict[str, Interval | None] | None = None
    """Each category score's 95% interval; a category's malformed interval is None."""

    @field_validator("scores", mode="before")
    @classmethod
    def _numeric_scores(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: v for k, v in value.items() if _share(v)}
        return value

    @field_validator("intervals", mode="before")
    @classmethod
    def _each_interval(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: _interval_or_none(v) for k, v in value.items()}
        return value

    @property
    def is_profile(self) -> bool:
        """Whether the entry is a profile at all: an object with a known tier."""
        return self.is_object and self.tier is not None

    def status(self, suite_hash: str) -> tuple[bool, str]:
        """Whether it may be used with the suite hashed ``suite_hash``, and why not.

        ``(True, "valid")``; ``(False, "stale: ...")`` naming what differs; ``(False, "not a profile")``.
        """
        if not self.is_profile:
            return False, "not a profile"
        reasons: list[str] = []
        if self.benchmark_version != BENCHMARK_VERSION:
            version = self.found("benchmarkVersion")
            shown = "missing" if version is None else json.dumps(version)
            reasons.append(f"benchmarkVersion {shown}, this engine is {BENCHMARK_VERSION}")
        if self.tests_hash != suite_hash:
            stored = self.found("testsHash")
            shown = "missing" if stored is None else str(stored)
            reasons.append(f"suite changed (testsHash {shown}, suite now {suite_hash})")
        if reasons:
            return False, "stale: " + "; ".join(reasons)
        return True, "valid"


def _share(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1


def _interval_or_none(value: object) -> tuple[float, float] | None:
    try:
        return _INTERVAL.validate_python(value)
    except ValidationError:
        return None
