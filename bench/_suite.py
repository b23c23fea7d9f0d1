"""Write a benchmark suite: N single-step tests of every category, mixing text, regex, JSON and tool-call checks.

Each test's prompt carries the marker ``<<bench:KIND>>`` that makes the
loopback server (``_server.py``) send the answer the test expects, so every
check is really evaluated and every test scores 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["KINDS", "write_suite"]

_WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Forecast for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "options": {"type": "object", "properties": {"unit": {"type": "string"}}},
            },
            "required": ["city"],
        },
    },
}
_EMAIL_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "send_email",
        "description": "Send an email message to a recipient.",
        "parameters": {"type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}}},
    },
}


def _sentence() -> dict[str, Any]:
    return {
        "category": "instruction",
        "prompt": "Write one sentence of exactly 10 words that begins with 'Every' and ends with 'river'.",
        "checks": [
            {"type": "word_count", "value": 10, "weight": 2},
            {"type": "first_word", "value": "Every"},
            {"type": "last_word", "value": "river"},
            {"type": "not_contains", "value": ","},
            {"type": "regex", "value": "\\bfisherman\\b", "flags": "i"},
            {"type": "not_empty"},
        ],
    }


def _list() -> dict[str, Any]:
    return {
        "category": "instruction",
        "prompt": "List three metals, one per line, nothing else.",
        "checks": [
            {"type": "line_count", "value": 3, "weight": 2},
            {"type": "contains", "value": "copper"},
            {"type": "not_regex", "value": "^\\s*[-*\\d]", "flags": "m"},
        ],
    }


def _json() -> dict[str, Any]:
    return {
        "category": "json",
        "prompt": "Reply only with a JSON object describing the three cheapest items and the total.",
        "checks": [
            {"type": "json_valid", "weight": 3},
            {"type": "json_path_length", "path": "cheapest", "value": 3, "weight": 2},
            {"type": "json_path_equals", "path": "cheapest[0].name", "value": "spoon"},
            {"type": "json_path_equals", "path": "cheapest[2].price", "value": 9},
            {"type": "json_path_equals", "path": "total_cost", "value": 73, "weight": 2},
            {"type": "json_path_type", "path": "in_stock", "value": "boolean"},
        ],
    }


def _fenced() -> dict[str, Any]:
    return {
        "category": "json",
        "prompt": "Give the store as JSON in a code block.",
        "checks": [
            {"type": "json_valid"},
            {"type": "json_path_equals", "path": "cheapest[?price > `5`].name | [0]", "value": "mug", "weight": 2},
            {"type": "json_path_length", "path": "store.tags", "value": 2},
            {"type": "json_path_type", "path": "length(cheapest)", "value": "integer"},
        ],
    }


def _tool() -> dict[str, Any]:
    return {
        "category": "toolCalling",
        "tools": [_WEATHER_TOOL, _EMAIL_TOOL],
        "prompt": "What will the weather be in Paris for the next three days, in celsius?",
        "checks": [
            {"type": "tool_called", "value": "get_weather", "weight": 2},
            {"type": "tool_not_called", "value": "send_email"},
            {"type": "tool_arg_equals", "arg": "days", "value": 3, "weight": 2},
            {"type": "tool_arg_equals", "arg": "options.unit", "value": "celsius"},
            {"type": "tool_arg_regex", "arg": "city", "value": "^paris$"},
        ],
    }


def _abstain() -> dict[str, Any]:
    return {
        "category": "toolCalling",
        "tools": [_EMAIL_TOOL],
        "prompt": "What does the send_email tool do? Do not call it.",
        "checks": [
            {"type": "tool_not_called", "weight": 2},
            {"type": "contains", "value": "send_email"},
        ],
    }


KINDS = {
    "sentence": _sentence,
    "list": _list,
    "json": _json,
    "fenced": _fenced,
    "tool": _tool,
    "abstain": _abstain,
}
"""Test templates by marker kind, cycled through in this order."""


def write_suite(folder: Path, n: int) -> list[Path]:
    """Write ``n`` test files into ``folder`` (created if needed), cycling through :data:`KINDS`."""
    folder.mkdir(parents=True, exist_ok=True)
    kinds = list(KINDS.items())
    written: list[Path] = []
    for index in range(n):
        kind, make = kinds[index % len(kinds)]
        test = make()
        test["name"] = f"bench_{index:05d}_{kind}"
        test["prompt"] = f"{test['prompt']} (case {index}) <<bench:{kind}>>"
        path = folder / f"{index:05d}_{kind}.json"
        path.write_text(json.dumps(test, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written
