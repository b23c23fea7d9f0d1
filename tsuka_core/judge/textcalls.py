"""Tool calls a model wrote into its answer text, which the server did not turn into ``tool_calls``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tsuka_core.judge.jsontools import extract_json

__all__ = ["text_tool_call"]

_MARKERS = ("<tool_call>", "[TOOL_CALLS]", "<|tool_call|>", "<function=", "<|python_tag|>")
"""Text that opens a tool call in common chat templates (Hermes/Qwen, Mistral, Phi, Llama 3)."""


def text_tool_call(text: str) -> str | None:
    """The name of the tool the answer text calls, ``""`` when a call is plain but its name is not, else None.

    Found: a ``<tool_call>`` block, Mistral's ``[TOOL_CALLS]``, and other
    templates' markers; a ``{"name": ..., "arguments": ...}`` object, alone or
    in a fenced block (the whole answer must be that object, or a list of them).
    """
    marker = next((m for m in _MARKERS if m in text), None)
    if marker is not None:
        after = text[text.index(marker) + len(marker) :]
        if marker == "<function=":
            return after.split(">", 1)[0].strip()
        if marker == "[TOOL_CALLS]" and "[ARGS]" in after:
            return after.split("[ARGS]", 1)[0].strip()
        found = extract_json(after.replace("</tool_call>", " "))
        return (_call_name(found.value) or "") if found is not None else ""
    found = extract_json(text)
    if found is None or found.method not in ("strict", "fenced"):
        return None
    return _call_name(found.value)


def _call_name(value: Any) -> str | None:
    """The tool name of a call-shaped object (or the first of a list of them); None for anything else."""
    if isinstance(value, list) and value:
        value = value[0]
    if not isinstance(value, Mapping):
        return None
    function = value.get("function")
    if isinstance(function, Mapping):
        value = function
    name = value.get("name")
    if isinstance(name, str) and name and ("arguments" in value or "parameters" in value):
        return name
    return None
