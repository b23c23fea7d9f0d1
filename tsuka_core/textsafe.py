"""Text from outside made safe: lone surrogates replaced where JSON enters, control characters escaped for terminals.

A server, a store file or a history file may hold JSON such as ``"\\ud800"``:
valid JSON, but a string no UTF-8 writer accepts. :func:`scrub` replaces every
lone surrogate with U+FFFD once, where the JSON is decoded, so every later
writer (history, store, terminal) sees text it can encode.

:func:`terminal_text` is what a terminal is shown: C0 and C1 control characters
(escape sequences that clear the screen, set the window title or fake links)
appear escaped, C0 as ``\\x1b``, DEL and C1 as ``\\u009b``; newline and tab stay
as they are. JSON writers escape C0 themselves but not DEL and C1: written as
JSON's own escape, JSON output on a terminal still reads back as the same text.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["REPLACEMENT", "loads", "one_line", "scrub", "scrub_text", "terminal_text"]

REPLACEMENT = "\ufffd"
"""What a lone surrogate becomes."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_ANY_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def scrub_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (a string that has none is returned as it is)."""
    if text.isascii():
        return text
    return _SURROGATE.sub(REPLACEMENT, text)


def scrub(value: Any) -> Any:
    """Decoded JSON with lone surrogates replaced by U+FFFD in every string and every key.

    Walks dicts and lists iteratively (no recursion limit to hit on deep JSON);
    other values are returned as they are.
    """
    if isinstance(value, str):
        return scrub_text(value)
    if not isinstance(value, dict | list):
        return value
    pending: list[dict[Any, Any] | list[Any]] = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, list):
            for i, item in enumerate(node):
                node[i] = _scrub_item(item, pending)
        else:
            _scrub_dict(node, pending)
    return value


def _scrub_item(item: Any, pending: list[dict[Any, Any] | list[Any]]) -> Any:
    if isinstance(item, str):
        return scrub_text(item)
    if isinstance(item, dict | list):
        pending.append(item)
    return item


def _scrub_dict(node: dict[Any, Any], pending: list[dict[Any, Any] | list[Any]]) -> None:
    if any(isinstance(k, str) and not k.isascii() and _SURROGATE.search(k) for k in node):
        items = [(scrub_text(k) if isinstance(k, str) else k, v) for k, v in node.items()]
        node.clear()
        node.update(items)
    for key, item in node.items():
        node[key] = _scrub_item(item, pending)


def loads(text: str | bytes) -> Any:
    """``json.loads(text)`` with its strings scrubbed (:func:`scrub`); raises what ``json.loads`` raises."""
    import json

    return scrub(json.loads(text))


def terminal_text(text: str) -> str:
    """``text`` as a terminal may show it: control characters but newline and tab escaped, surrogates replaced."""
    text = scrub_text(text)
    if text.isprintable() or not _CONTROL.search(text):
        return text
    return _CONTROL.sub(_escape, text)


def one_line(text: str) -> str:
    """``text`` as one terminal line: every control character escaped, newline and tab included (``\\n``, ``\\t``).

    For what a model or a server names or says where tsuka prints a line of its own (a tool name, a check's
    detail): a newline in it could otherwise start a line that reads like tsuka's.
    """
    text = scrub_text(text)
    if text.isprintable():
        return text
    return _ANY_CONTROL.sub(_escape_any, text)


def _escape_any(match: re.Match[str]) -> str:
    char = match.group()
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return named.get(char) or _escape(match)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x20 else f"\\u{code:04x}"
