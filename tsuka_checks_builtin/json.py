"""Check types that judge JSON taken from the answer: validity, values, types, lengths."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from tsuka_core import (
    Answer,
    CheckParams,
    CheckType,
    Outcome,
    PathParams,
    extract_json,
    json_at_path,
    json_equal,
    json_type_name,
)

__all__ = ["JsonPathEquals", "JsonPathLength", "JsonPathType", "JsonValid"]

JsonType = Literal["string", "number", "integer", "boolean", "array", "object", "null"]


def compact(value: Any, limit: int = 60) -> str:
    """A JSON value as compact text, shortened to ``limit`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class PathEqualsParams(PathParams):
    """A path and the JSON value expected there."""

    value: Any
    """The expected JSON value (typed: 8080 is not "8080")."""


class PathTypeParams(PathParams):
    """A path and the JSON Schema type expected there."""

    value: JsonType
    """One of string, number, integer, boolean, array, object, null."""


class PathLengthParams(PathParams):
    """A path and the array length expected there."""

    value: Annotated[int, Field(ge=0)]
    """The expected number of elements."""


class ValidParams(CheckParams):
    """Whether JSON json-repair had to fix counts."""

    as_written: bool = False
    """True: pass only JSON valid as the model wrote it (whole, fenced or embedded), never a repaired one."""
    whole: bool = False
    """True: the answer must be the JSON and nothing else (a fenced block alone counts); JSON inside prose, or
    repaired, does not pass."""
    ifeval: bool = False
    """True: read the answer exactly as IFEval's JSON format instruction does: stripped, one leading ```json (or
    ```Json, ```JSON, ```) and one trailing ``` taken off, and the rest read whole by Python's json module, which
    takes NaN and Infinity as numbers. The other parameters are not read."""


class JsonValid(CheckType[ValidParams]):
    """Pass when a JSON value can be taken from the answer (whole, fenced, embedded or repaired).

    An answer cut at the token limit never passes, whatever json-repair would complete it into; with
    `as_written`, JSON that had to be repaired does not pass either; with `whole`, only an answer that is the JSON
    alone (or one fenced block alone) passes.
    """

    name = "json_valid"
    params_model = ValidParams
    example: ClassVar[Mapping[str, Any]] = {"weight": 3, "as_written": True}

    def evaluate(self, answer: Answer) -> Outcome:
        if answer.cut:
            return Outcome.fail("answer cut at the token limit: what it wrote is not judged as JSON")
        if self.params.ifeval:
            return _as_ifeval(answer.text)
        found = extract_json(answer.text)
        if found is None:
            return Outcome.fail("no JSON in the answer")
        if (self.params.as_written or self.params.whole) and found.method == "repaired":
            return Outcome.fail(f"the JSON is not valid as written (json-repair read a {json_type_name(found.value)})")
        alone = answer.text.strip()
        fenced_alone = found.method == "fenced" and alone.startswith("```") and alone.endswith("```")
        if self.params.whole and found.method != "strict" and not fenced_alone:
            return Outcome.fail(f"the answer holds more than the JSON ({found.method} {json_type_name(found.value)})")
        return Outcome.ok(f"{found.method} {json_type_name(found.value)}")

    def advice(self, others: Sequence[str]) -> str | None:
        """A plain json_valid beside no check of the JSON's shape passes JSON found anywhere: say how to ask more."""
        if self.params.whole or self.params.as_written or self.params.ifeval:
            return None
        if any(name.startswith("json_path") for name in others):
            return None
        return ("json_valid passes an answer that holds JSON anywhere (an array inside code counts); to ask for an "
                "answer that is a JSON object, add whole: true (or as_written: true) and "
                '{"type": "json_path_type", "path": "@", "value": "object"}')  # fmt: skip


def _as_ifeval(text: str) -> Outcome:
    """IFEval's JSON format verdict: the text without its fences, read whole by Python's json module."""
    body = text.strip()
    for fence in ("```json", "```Json", "```JSON", "```"):
        body = body.removeprefix(fence)
    body = body.removesuffix("```").strip()
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return Outcome.fail("not JSON as IFEval reads it (the answer without its fences, read whole)")
    return Outcome.ok(f"JSON {json_type_name(value)}, read as IFEval reads it")


class JsonPathEquals(CheckType[PathEqualsParams]):
    """Pass when the JSON value at `path` equals `value` (JSON-typed equality)."""

    name = "json_path_equals"
    params_model = PathEqualsParams
    example: ClassVar[Mapping[str, Any]] = {"path": "endpoints[0].method", "value": "GET"}

    def evaluate(self, answer: Answer) -> Outcome:
        found, problem = json_at_path(answer, self.params.json_path)
        if problem:
            return problem
        want = self.params.value
        return Outcome.check(
            json_equal(found, want), f"{self.params.path} is {compact(found)}, expected {compact(want)}"
        )


class JsonPathType(CheckType[PathTypeParams]):
    """Pass when the JSON value at `path` has the JSON Schema type `value`."""

    name = "json_path_type"
    params_model = PathTypeParams
    example: ClassVar[Mapping[str, Any]] = {"path": "port", "value": "integer"}

    def evaluate(self, answer: Answer) -> Outcome:
        found, problem = json_at_path(answer, self.params.json_path)
        if problem:
            return problem
        kind, want = json_type_name(found), self.params.value
        ok = kind == want or (want == "number" and kind == "integer")
        return Outcome.check(ok, f"{self.params.path} is {kind}, expected {want}")


class JsonPathLength(CheckType[PathLengthParams]):
    """Pass when the JSON value at `path` is an array of exactly `value` elements."""

    name = "json_path_length"
    params_model = PathLengthParams
    example: ClassVar[Mapping[str, Any]] = {"path": "cheapest", "value": 3, "weight": 2}

    def evaluate(self, answer: Answer) -> Outcome:
        found, problem = json_at_path(answer, self.params.json_path)
        if problem:
            return problem
        if not isinstance(found, list):
            return Outcome.fail(f"{self.params.path} is {json_type_name(found)}, not an array")
        size = len(found)
        return Outcome.check(
            size == self.params.value, f"{self.params.path} has {size} elements, expected {self.params.value}"
        )
