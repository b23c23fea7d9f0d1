"""JSON as checks need it: taking a value out of answer text, typed equality, type names, paths.

Model output is untrusted, so every way of reading JSON from it is bounded:
strict parsing refuses nesting deeper than Python's recursion allows, scanning
stops after :data:`MAX_SCAN_CHARS`, and json-repair (pure Python, and very
slow on some inputs) runs under a budget of :data:`REPAIR_BUDGET` seconds,
after which the text counts as not repairable.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from types import FrameType
from typing import TYPE_CHECKING, Any, Literal

from tsuka_core.textsafe import scrub

if TYPE_CHECKING:
    from jmespath.parser import ParsedResult

__all__ = [
    "MISSING",
    "PATH_TIMEOUT",
    "ExtractedJson",
    "JsonPath",
    "extract_json",
    "json_equal",
    "json_type_name",
    "loads_strict",
    "repair_json",
]

Method = Literal["strict", "fenced", "extracted", "repaired"]


class _Missing:
    """``MISSING``: nothing is at the path. :meth:`JsonPath.find`, ``json_at_path`` and ``first_call_argument``
    return it then (``None`` is JSON's ``null``, a value found). Test for it with ``value is MISSING``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __reduce__(self) -> str:
        return "MISSING"  # a copy or a pickle is the one sentinel


MISSING: Any = _Missing()
"""Returned by :meth:`JsonPath.find` when nothing is at the path."""

MAX_SCAN_CHARS = 1_000_000
"""Longest text that extraction scans for embedded JSON or repairs (bounded cost)."""
MAX_CANDIDATES = 32
"""Most opening brackets tried as the start of embedded JSON."""
REPAIR_BUDGET = 0.5
"""Seconds one json-repair call may take before it is abandoned (read at call time, so tests may change it)."""
PATH_TIMEOUT = 1.0
"""Seconds one JMESPath search may take before its check is ``errored``, as a regex search (read at call time)."""

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n(.*?)```", re.DOTALL)
_PLAIN_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[-?\d+\]|\.[A-Za-z_][A-Za-z0-9_]*)*")
_PATH_PART = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_]*)|\[(-?\d+)\]")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads_strict(text: str) -> Any:
    """Parse standard JSON only: ``NaN`` and ``Infinity`` are refused; raises ValueError."""
    try:
        return scrub(json.loads(text, parse_constant=_reject_constant))
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc


@dataclass(frozen=True, slots=True)
class ExtractedJson:
    """A JSON value taken from answer text, and how it was obtained."""

    value: Any
    method: Method


def _try_strict(text: str) -> tuple[bool, Any]:
    try:
        return True, loads_strict(text)
    except ValueError:
        return False, None


def _embedded(text: str) -> Any:
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    start, tried = 0, 0
    while tried < MAX_CANDIDATES:
        positions = [p for p in (text.find("{", start), text.find("[", start)) if p >= 0]
        if not positions:
            return MISSING
        pos = min(positions)
        tried += 1
        try:
            value, _end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            start = pos + 1
            continue
        if isinstance(value, (dict, list)) and value:
            return scrub(value)
        start = pos + 1
    return MISSING


class _OverBudget(BaseException):
    """Raised inside a bounded call when its time is up (a BaseException, so no ``except Exception`` there eats it)."""


def _bounded(deadline: float, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, raising :class:`_OverBudget` inside it once ``time.monotonic()`` passes ``deadline``.

    The clock is checked by a profile hook on this thread every few hundred
    Python calls (the bounded code is pure Python); any profiler already set on
    the thread is put back afterwards.
    """
    calls = 0

    def guard(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal calls
        calls += 1
        if calls % 256 == 0 and time.monotonic() > deadline:
            raise _OverBudget

    previous = sys.getprofile()
    sys.setprofile(guard)
    try:
        return fn(*args)
    finally:
        sys.setprofile(previous)


def repair_json(text: str, deadline: float | None = None) -> Any:
    """``json_repair.loads(text)`` within :data:`REPAIR_BUDGET` seconds; :data:`MISSING` when it fails or runs out.

    ``deadline`` (a ``time.monotonic()`` value) shortens the budget, so that
    several repairs of one answer share one.
    """
    import json_repair  # loaded when an answer first needs repair, not by 'tsuka validate'

    own = time.monotonic() + REPAIR_BUDGET
    deadline = own if deadline is None else min(own, deadline)
    if time.monotonic() >= deadline:
        return MISSING
    try:
        return scrub(_bounded(deadline, json_repair.loads, text))
    except _OverBudget:
        return MISSING
    except Exception:  # json-repair on hostile input: a failure to repair is not a crash
        return MISSING


def _repaired(text: str) -> Any:
    """A repair of the text from its first bracket, kept only when it is a non-empty value of that bracket's kind.

    json-repair turns prose after a stray ``{`` into an array of strings
    (``{bad idea`` gives ``["bad idea"]``); an object that comes back as an
    array was never JSON.
    """
    starts = [p for p in (text.find("{"), text.find("[")) if p >= 0]
    if not starts:
        return MISSING
    start = min(starts)
    value = repair_json(text[start:])
    kind = dict if text[start] == "{" else list
    if isinstance(value, kind) and value:
        return value
    return MISSING


def extract_json(text: str) -> ExtractedJson | None:
    """Take a JSON value from answer text, or ``None`` when there is none.

    Tried in order: the whole text (``strict``), one fenced code block
    (``fenced``), a JSON object or array inside prose (``extracted``), and a
    json-repair of the text from its first bracket (``repaired``, within
    :data:`REPAIR_BUDGET`). Plain prose never yields a value. The last text's
    result is kept, so the several JSON checks of one step read the answer once;
    treat the value as read-only.
    """
    return _extract_cached(text)


@lru_cache(maxsize=1)
def _extract_cached(text: str) -> ExtractedJson | None:
    stripped = text.strip()
    ok, value = _try_strict(stripped)
    if ok:
        return ExtractedJson(value, "strict")
    scan = stripped[:MAX_SCAN_CHARS]
    fence = _FENCE.search(scan)
    if fence:
        ok, value = _try_strict(fence.group(2).strip())
        if ok:
            return ExtractedJson(value, "fenced")
        scan = fence.group(2)
    value = _embedded(scan)
    if value is not MISSING:
        return ExtractedJson(value, "extracted")
    value = _repaired(scan)
    if value is not MISSING:
        return ExtractedJson(value, "repaired")
    return None


def json_type_name(value: Any) -> str:
    """The JSON Schema type name of a value: string, integer, number, boolean, array, object, null."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def json_equal(left: Any, right: Any) -> bool:
    """JSON equality: same type and value; 8080 equals 8080.0; a boolean is never a number."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return left == right
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(json_equal(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    if type(left) is not type(right):
        return False
    return bool(left == right)


class JsonPath:
    """A compiled path into a JSON value: a plain dotted path or any JMESPath expression."""

    __slots__ = ("_parsed", "_parts", "text")

    def __init__(self, text: str, *, literal_key: bool = False) -> None:
        """Compile ``text``; raises ValueError with the parser's reason when it is not valid.

        With ``literal_key``, a text free of JMESPath syntax is one top-level key
        taken as written (so ``file-name`` names the argument ``file-name``).
        """
        self.text = text
        self._parts: list[str | int] | None = None
        self._parsed: ParsedResult | None = None
        if literal_key and text and not any(c in text for c in ".[]|*@&!(){}'\"`,:?<>= \t\n"):
            self._parts = [text]
        elif _PLAIN_PATH.fullmatch(text):
            self._parts = [name if name else int(index) for name, index in _PATH_PART.findall(text)]
        else:
            import jmespath  # loaded for the first path that is not a plain dotted one
            import jmespath.exceptions

            try:
                self._parsed = jmespath.compile(text)
            except jmespath.exceptions.JMESPathError as exc:
                reason = " ".join(str(exc).split()) or type(exc).__name__
                raise ValueError(f"not a valid JMESPath expression: {reason}") from exc
            except RecursionError:
                raise ValueError("not a valid JMESPath expression: it is nested too deeply") from None

    def find(self, document: Any) -> Any:
        """The value at the path in ``document``, or :data:`MISSING`."""
        if self._parts is not None:
            current = document
            for part in self._parts:
                if isinstance(part, int):
                    if not isinstance(current, list) or not -len(current) <= part < len(current):
                        return MISSING
                    current = current[part]
                elif isinstance(current, dict) and part in current:
                    current = current[part]
                else:
                    return MISSING
            return current
        assert self._parsed is not None
        from jmespath.exceptions import JMESPathError

        try:
            found = _bounded(time.monotonic() + PATH_TIMEOUT, self._parsed.search, document)
        except _OverBudget:
            from tsuka_core.judge.patterns import PathTimeout  # loads regex: only when a search runs out of time

            raise PathTimeout(f"JMESPath search exceeded {PATH_TIMEOUT:g} s") from None
        except (JMESPathError, RecursionError, TypeError, ValueError):
            return MISSING
        return MISSING if found is None else found
