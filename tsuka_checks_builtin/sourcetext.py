"""Arguments written as Java or JavaScript source text, read by the type a tool declares, as BFCL's checker reads them.

BFCL's Java and JavaScript entries want every argument as a string of source
text (``"true"``, ``"50L"``, ``"1.5f"``, ``"new int[]{1, 2}"``,
``"new ArrayList<>(Arrays.asList(\\"a\\"))"``, ``"{'key': 'value'}"``) and read
it by the parameter's declared type before comparing: text that is not of that
type stays the text it was (and is then judged as a variable's name). The
readers here follow BFCL's type converters, quirks included: a Java ``char`` is
never read (BFCL's pattern for it matches nothing), a JavaScript array of arrays
is read element by element without the declared item type, and a type BFCL does
not read (``Set``, ``Queue``...) is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

__all__ = ["JAVASCRIPT_KINDS", "JAVA_KINDS", "Language", "kind_of", "read_source"]

Language = Literal["java", "javascript"]

JAVA_KINDS = {
    "byte": "integer", "short": "integer", "integer": "integer", "long": "integer",
    "float": "number", "double": "number", "boolean": "boolean", "char": "string", "String": "string",
    "any": "string", "Array": "array", "ArrayList": "array", "HashMap": "object",
}  # fmt: skip
"""The JSON kind a Java type reads as (BFCL reads ``float`` and ``double`` as Python floats)."""
JAVASCRIPT_KINDS = {
    "String": "string", "integer": "integer", "Bigint": "integer", "float": "number", "Boolean": "boolean",
    "any": "string", "array": "array", "dict": "object",
}  # fmt: skip
"""The JSON kind a JavaScript type reads as."""

_INTEGER = re.compile(r"^-?\d+$")
_JAVA_FLOAT = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$")
_JAVA_DOUBLE = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$")
_JAVA_LONG = re.compile(r"^-?\d+[lL]$")
_JS_FLOAT = re.compile(r"^-?\d+(\.\d+)?$")
_JS_BIGINT = re.compile(r"^-?\d+n$")


def kind_of(language: Language, declared: str) -> str | None:
    """The JSON kind ``declared`` reads as in ``language``; None for a type that is not read."""
    return (JAVA_KINDS if language == "java" else JAVASCRIPT_KINDS).get(declared)


def read_source(text: str, language: Language, declared: str, items: str | None = None) -> Any:
    """``text`` read as a value of the ``declared`` type (``items``: an array's item type), or ``text`` unchanged.

    Raises ValueError for a type that is not read.
    """
    if language == "java":
        return _java(text, declared, items)
    return _javascript(text, declared, items)


def _java(text: str, declared: str, items: str | None = None) -> Any:
    scalar = _JAVA_SCALARS.get(declared)
    if scalar is not None:
        return scalar(text)
    if declared == "ArrayList":
        return _java_list(text, items)
    if declared == "Array":
        return _java_array(text, items)
    if declared == "HashMap":
        return _java_map(text)
    raise ValueError(f"Java type {declared!r} is not read")


def _when(pattern: re.Pattern[str], read: Callable[[str], Any]) -> Callable[[str], Any]:
    return lambda text: read(text) if pattern.match(text) else text


_JAVA_SCALARS: dict[str, Callable[[str], Any]] = {
    "byte": _when(_INTEGER, int),
    "short": _when(_INTEGER, int),
    "integer": _when(_INTEGER, int),
    "long": _when(_JAVA_LONG, lambda t: int(t.rstrip().rstrip("lL"))),
    "float": _when(_JAVA_FLOAT, lambda t: float(t.rstrip().rstrip("fF"))),
    "double": _when(_JAVA_DOUBLE, float),
    "boolean": lambda text: text == "true" if text in ("true", "false") else text,
    "char": str,
    "String": str,
    "any": str,
}


def _java_element(text: str, items: str | None) -> Any:
    """One element of a Java collection: unquoted for ``char``/``String`` items, else read by its item type."""
    if items in ("char", "String"):
        return text[1:-1]
    return _java(text, items) if items else _java_literal(text)


def _java_list(text: str, items: str | None) -> Any:
    as_list = re.search(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)", text)
    if as_list:
        return [_java_element(part.strip(), items) for part in as_list.group(1).split(",")]
    added = re.search(r"new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}", text, re.DOTALL)
    if added:
        return [_java_element(part.strip(), items) for part in re.findall(r"add\((.+?)\)", added.group(1))]
    if re.search(r"new\s+ArrayList<\w*>\(\)", text):
        return []
    return text


def _java_array(text: str, items: str | None) -> Any:
    found = re.search(r"new\s+\w+\[\]\s*\{(.*?)\}", text)
    if not found:
        return text
    parts = [part.strip() for part in found.group(1).split(",") if part.strip()]
    return [_java(part, items) if items else _java_literal(part) for part in parts]


def _java_map(text: str) -> Any:
    found = re.search(r"new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", text, re.DOTALL)
    if found:
        puts = found.group(1)
        if not puts.strip():
            return {}
        return {key: _java_literal(value.strip()) for key, value in re.findall(r"put\(\"(.*?)\",\s*(.*?)\)", puts)}
    if re.search(r"new\s+HashMap<.*?>\s*\(\)", text):
        return {}
    return text


def _java_literal(text: str) -> Any:
    """A Java literal of no declared type: a boolean, a quoted string, a long, a float, an int, else the text."""
    if text in ("true", "false"):
        return text == "true"
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if _JAVA_LONG.match(text):
        return int(text[:-1])
    if _JAVA_FLOAT.match(text):
        return float(re.sub(r"[fF]$", "", text))
    return _number_or_text(text)


def _number_or_text(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def _javascript(text: str, declared: str, items: str | None = None) -> Any:
    if declared == "String":
        quoted = len(text) >= 1 and text[0] == text[-1] and text[0] in "\"'"
        return text[1:-1] if quoted else text
    if declared == "integer":
        return int(text) if _INTEGER.match(text) else text
    if declared == "float":
        return float(text) if _JS_FLOAT.match(text) else text
    if declared == "Bigint":
        return int(text[:-1]) if _JS_BIGINT.match(text) else text
    if declared == "Boolean":
        return text == "true" if text in ("true", "false") else text
    if declared == "array":
        return _js_array(text.strip(), items)
    if declared == "dict":
        return _js_object(text.strip())
    if declared == "any":
        return text
    raise ValueError(f"JavaScript type {declared!r} is not read")


_JS_ARRAYS = re.compile(r"\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)")
_JS_ARRAY = re.compile(r"\[(.*?)\]|\bnew\s+Array\((.*?)\)")


def _js_array(code: str, items: str | None) -> Any:
    try:
        nested = _JS_ARRAYS.match(code)
        if nested:
            rows = []
            for index, found in enumerate(re.findall(r"\[(.*?)\]", nested.group(0))):
                inner = found.strip()
                if index == 0 and inner.startswith("["):
                    inner = inner[1:]
                rows.append([_js_literal(part.strip()) for part in inner.split(",")])
            return rows
        flat = _JS_ARRAY.match(code)
        if not flat:
            return code
        inside = (flat.group(1) if flat.group(1) is not None else flat.group(2) or "").strip()
        parts = inside.split(",") if inside else []
        if not items:
            return [_js_literal(part.strip()) for part in parts]
        return [_javascript(part.strip(), items) for part in parts]
    except (ValueError, IndexError):
        return code


def _js_object(code: str) -> Any:
    if code == "{}":
        return {}
    found = re.match(r"\{(.*?)\}", code)
    if not found:
        return code
    pairs = re.findall(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)", found.group(1))
    result: dict[str, Any] = {}
    for key, written in pairs:
        value, name = written.strip(), key.strip().strip("'\"")
        if value.startswith("[") and value.endswith("]"):
            result[name] = _js_array(value, None)
        elif value.startswith("{") and value.endswith("}"):
            result[name] = _js_object(value)
        else:
            result[name] = _js_literal(value.strip("'\""))
    return result


def _js_literal(text: str) -> Any:
    """A JavaScript literal of no declared type: a boolean, a quoted string, a number, else the text."""
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if len(text) >= 1 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return _number_or_text(text)
