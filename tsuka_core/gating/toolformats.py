"""Tool lists as callers hold them: an OpenAI tool array or an MCP ``tools/list`` result, read and written back."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tsuka_core.errors import UsageError
from tsuka_core.gating.toolnames import check_tool_names

__all__ = ["ToolFormat", "ToolsDocument", "read_tools_document"]

ToolFormat = Literal["openai", "mcp"]
"""``openai``: an array of ``{"type": "function", "function": {...}}``; ``mcp``: ``{"tools": [{"name": ...}]}``."""


@dataclass(frozen=True)
class ToolsDocument:
    """A tools file as read: its format, its tools, and the object around them (None for a bare array)."""

    path: Path
    format: ToolFormat
    tools: list[dict[str, Any]]
    outer: dict[str, Any] | None = None
    """The whole document when the tools sit inside an object (``tools``, or a JSON-RPC ``result.tools``)."""

    def render(self, kept: Sequence[Mapping[str, Any]], fmt: str) -> str:
        """The document with only ``kept`` tools, in its own format, or (``names``) their names one per line.

        A kept tool without a valid name is a UsageError: a name with a newline would add a line to the list.
        """
        if fmt == "names":
            return "".join(f"{name}\n" for name in check_tool_names(kept, f"{self.path}: kept tool #{{number}}"))
        if fmt != self.format:
            label = "an MCP tools/list result" if self.format == "mcp" else "an OpenAI tool array"
            raise UsageError(f"{self.path}: the tools file is {label}; use --format {self.format} or names")
        if self.outer is None:
            return json.dumps(list(kept), indent=2, ensure_ascii=False) + "\n"
        whole = copy.deepcopy(self.outer)
        holder = whole["result"] if isinstance(whole.get("result"), dict) else whole
        holder["tools"] = list(kept)
        return json.dumps(whole, indent=2, ensure_ascii=False) + "\n"


def read_tools_document(path: Path) -> ToolsDocument:
    """Read ``path``: an OpenAI tool array (bare or under ``tools``), or an MCP tools/list result or response."""
    from tsuka_core.storage.files import read_regular_file

    try:
        data: Any = json.loads(read_regular_file(path).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise UsageError(f"{path}: cannot read the tools: {' '.join(str(exc).split())}") from exc
    if isinstance(data, list):
        return _named(ToolsDocument(path, "openai", _objects(path, data, "[{}]")), "[{index}]")
    if not isinstance(data, dict):
        raise UsageError(f"{path}: expected a JSON array of tool schemas or an MCP tools/list result")
    if isinstance(data.get("error"), Mapping):
        raise UsageError(f"{path}: a JSON-RPC error response: {data['error'].get('message', data['error'])}")
    holder, where = (data["result"], "result.tools") if isinstance(data.get("result"), dict) else (data, "tools")
    if not isinstance(holder.get("tools"), list):
        raise UsageError(f"{path}: expected a JSON array of tool schemas or an object with a '{where}' array")
    tools = _objects(path, holder["tools"], where + "[{}]")
    if tools and all(isinstance(t.get("function"), Mapping) for t in tools):
        return _named(ToolsDocument(path, "openai", tools, data), where + "[{index}]")
    return _named(ToolsDocument(path, "mcp", tools, data), where + "[{index}]")


def _named(document: ToolsDocument, where: str) -> ToolsDocument:
    """``document`` once every tool in it has a valid name; the first that has not is a UsageError naming it."""
    check_tool_names(document.tools, f"{document.path}: {where} (tool #{{number}})")
    return document


def _objects(path: Path, items: list[Any], where: str) -> list[dict[str, Any]]:
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise UsageError(f"{path}: {where.format(index)}: expected a tool object, got {type(item).__name__}")
    return items
