"""The profile store's text: JSON laid out as the TypeScript TSUKA writes it, so both can share one file."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from decimal import Decimal
from math import isfinite
from typing import Any

__all__ = ["dumps_store"]


def dumps_store(data: Any) -> str:
    """``data`` as TSUKA writes it (``JSON.stringify(data, null, 2)``), with a trailing newline.

    Two-space indentation, non-ASCII as is, numbers in JavaScript form (``1.0`` is ``1``, ``1e-7`` is
    ``1e-7``), non-finite numbers as ``null``, lone surrogates escaped.
    """
    return _dump(data, "") + "\n"


def _dump(value: Any, indent: str) -> str:
    inner = indent + "  "
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        items = [f"{inner}{_string(_key(k))}: {_dump(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(inner + _dump(v, inner) for v in value) + "\n" + indent + "]"
    return _scalar(value)


def _key(key: object) -> str:
    if not isinstance(key, str):
        raise TypeError(f"profile store keys must be strings, not {type(key).__name__}")
    return key


def _scalar(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number(value)
    raise TypeError(f"{type(value).__name__} cannot be written to the profile store")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _string(text: str) -> str:
    encoded = json.dumps(text, ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", encoded)


def _number(value: float) -> str:
    """A float as JavaScript's Number#toString writes it (shortest digits, same exponent thresholds)."""
    if not isfinite(value):
        return "null"
    if value == 0:
        return "0"
    if value < 0:
        return "-" + _number(-value)
    _, digit_tuple, exponent = Decimal(repr(value)).normalize().as_tuple()
    if not isinstance(exponent, int):
        return "null"
    digits = "".join(map(str, digit_tuple))
    k, n = len(digits), exponent + len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return f"{digits[:n]}.{digits[n:]}"
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    mantissa = digits if k == 1 else f"{digits[0]}.{digits[1:]}"
    return f"{mantissa}e{'+' if n > 0 else '-'}{abs(n - 1)}"
