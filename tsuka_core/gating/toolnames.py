"""Tool names: read from each shape a caller holds, and refused unless every API that takes tools could accept them.

A name is 1 to 128 of ``A-Z a-z 0-9 _ . : -`` (:data:`TOOL_NAME`). Whatever reads
an allow-list reads it as one name per line, per comma or per word; a name with
a newline, a space or a control character could smuggle a second name into the
list, so such a name is a bad input (:class:`~tsuka_core.errors.UsageError`),
never written out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from tsuka_core.errors import UsageError

__all__ = [
    "NAME_CHARS",
    "NAME_RULE",
    "TOOL_NAME",
    "check_tool_names",
    "checked_tool_name",
    "raw_tool_name",
    "shown_name",
]

NAME_CHARS = "A-Za-z0-9_.:-"
"""The characters a tool name may hold, as a regular-expression class body."""

TOOL_NAME = re.compile(f"[{NAME_CHARS}]{{1,128}}")
"""A valid tool name; use ``fullmatch`` (``$`` would let a trailing newline through)."""

NAME_RULE = "a tool name is 1 to 128 of A-Z a-z 0-9 _ . : - (the MCP tool-name rule, plus ':')"
"""The rule in words, for error messages."""

_SHOWN = 60
"""How many characters of a bad name an error message shows."""


def raw_tool_name(tool: object) -> object:
    """What a tool calls itself: a string itself, an OpenAI ``function.name``, an MCP ``name``, or ``.name``."""
    if isinstance(tool, str):
        return tool
    if isinstance(tool, Mapping):
        function = tool.get("function")
        return function.get("name") if isinstance(function, Mapping) else tool.get("name")
    return getattr(tool, "name", None)


def checked_tool_name(tool: object, where: str) -> str:
    """``tool``'s name when it is valid; else a UsageError naming ``where`` and the name, escaped, on one line."""
    name = raw_tool_name(tool)
    if isinstance(name, str) and TOOL_NAME.fullmatch(name):
        return name
    if name is None:
        problem = "has no name"
    elif not isinstance(name, str):
        problem = f"has a name that is not a string ({type(name).__name__})"
    else:
        problem = f"has the name {shown_name(name)}, not a valid tool name"
    raise UsageError(f"{where} {problem}; {NAME_RULE}")


def check_tool_names(tools: Iterable[object], where: str = "tool #{number}") -> list[str]:
    """The names of ``tools``, in order; the first invalid one is a UsageError (``where`` names its position).

    ``where`` is formatted with ``number`` (from 1) and ``index`` (from 0).
    """
    return [checked_tool_name(tool, where.format(number=i + 1, index=i)) for i, tool in enumerate(tools)]


def shown_name(name: str) -> str:
    """``name`` as a message may show it: escaped to printable ASCII, a long one cut with its length said."""
    if len(name) <= _SHOWN:
        return ascii(name)
    return f"{name[:_SHOWN]!a}... ({len(name)} characters)"
