"""An answer as the run history and the response cache store it: JSON that is read back strictly."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tsuka_core.backends.base import ChatResponse
from tsuka_core.backends.plausible import token_count
from tsuka_core.judge.answer import ToolCall
from tsuka_core.textsafe import scrub, scrub_text

__all__ = ["MAX_ANSWER_BYTES", "bounded_response_json", "response_from_json", "response_to_json"]

MAX_ANSWER_BYTES = 1024 * 1024
"""The most the history stores of one answer; a larger one is cut, and marked ``cut``."""


def response_to_json(response: ChatResponse) -> dict[str, Any]:
    """Everything of an answer needed to judge it again: text, content, reasoning apart, tool calls, usage, time."""
    return {
        "text": response.text,
        "content": response.content,
        "reasoning": response.reasoning,
        "toolCalls": [
            {"id": c.id, "name": c.name, "arguments": c.arguments, "problem": c.arguments_problem, "raw": dict(c.raw)}
            for c in response.tool_calls
        ],
        "promptTokens": response.prompt_tokens,
        "completionTokens": response.completion_tokens,
        "usageEstimated": response.usage_estimated,
        "duration": response.duration,
        **{name: value for name, (field, _) in _MEASURED.items() if (value := getattr(response, field)) is not None},
    }


_MILLIS = (int, float)
_MEASURED: dict[str, tuple[str, Any]] = {
    "generationMs": ("generation_ms", _MILLIS),
    "generatedTokens": ("generated_tokens", int),
    "promptMs": ("prompt_ms", _MILLIS),
    "promptProcessed": ("prompt_processed", int),
    "firstTokenMs": ("first_token_ms", _MILLIS),
    "speedSource": ("speed_source", str),
    "reasoningTokens": ("reasoning_tokens", int),
    "finishReason": ("finish_reason", str),
}
"""An answer's timings and counts as the server reported them: JSON name, ChatResponse field and JSON type."""
_SPEED_SOURCES = ("server", "stream", "wall")


def _measured(data: Mapping[str, Any]) -> dict[str, Any]:
    """The timing and count fields present in ``data``, checked; ValueError for one that is not what was written."""
    found = {field: _typed(data, name, kind) for name, (field, kind) in _MEASURED.items() if data.get(name) is not None}
    if found.get("speed_source", "wall") not in _SPEED_SOURCES:
        raise ValueError("'speedSource' is not one of server, stream, wall")
    return found


def bounded_response_json(
    response: ChatResponse, limit: int = MAX_ANSWER_BYTES, *, shortened: int | None = None
) -> tuple[str, bool]:
    """:func:`response_to_json` as compact JSON of at most ``limit`` UTF-8 bytes, and whether it had to be cut.

    A cut answer keeps the start of its text, content and reasoning, and of
    each tool call's arguments (as a JSON string), and holds ``"cut": N``, the
    size it had; it can be shown, not judged again. ``shortened``, the length
    the answer had before the run kept only its start, marks it cut whatever
    its size now.
    """
    data = response_to_json(response)
    text = _compact(data)
    size = len(text.encode("utf-8"))
    if size <= limit and shortened is not None:
        return _compact({**data, "cut": shortened}), True
    if size <= limit:
        return text, False
    share = limit // 8
    calls = data["toolCalls"][:64]
    cut = {
        **data,
        "text": _clipped(data["text"], share),
        "content": _clipped(data["content"], share),
        "reasoning": _clipped(data["reasoning"], share),
        "toolCalls": [_clipped_call(c, share // max(len(calls), 1)) for c in calls],
        "cut": size,
    }
    return _compact(cut), True


def _compact(value: Any) -> str:
    return scrub_text(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))


def _clipped(text: str | None, limit: int) -> str | None:
    """``text`` cut until its JSON form is at most ``limit`` bytes."""
    while text is not None and len(_compact(text).encode("utf-8")) > limit:
        text = text[: len(text) // 2]
    return text


def _clipped_call(call: dict[str, Any], limit: int) -> dict[str, Any]:
    arguments = _compact(call["arguments"])
    return {
        "id": _clipped(call["id"], 256),
        "name": _clipped(call["name"], 256),
        "arguments": _clipped(arguments, limit) if len(arguments) > limit else call["arguments"],
        "problem": "cut in the history",
        "raw": {},
    }


def response_from_json(data: Mapping[str, Any]) -> ChatResponse:
    """The answer :func:`response_to_json` wrote, equal to the original for every check (lone surrogates replaced).

    Raises ValueError when a field does not hold what ``response_to_json`` writes (a file changed by hand).
    """
    data = scrub(dict(data))
    calls = tuple(_call(c) for c in _typed(data, "toolCalls", list, []))
    completion = token_count(data.get("completionTokens", 0))
    if completion is None:
        raise ValueError("completionTokens is not a token count")
    return ChatResponse(
        text=_typed(data, "text", str),
        tool_calls=calls,
        content=_typed(data, "content", str | None, None),
        reasoning=_typed(data, "reasoning", str | None, None),
        prompt_tokens=token_count(data.get("promptTokens")),
        completion_tokens=completion,
        usage_estimated=bool(data.get("usageEstimated", False)),
        duration=float(_typed(data, "duration", int | float, 0.0)),
        **_measured(data),
    )


def _call(data: Any) -> ToolCall:
    if not isinstance(data, dict):
        raise ValueError("a tool call is not a JSON object")
    return ToolCall(
        id=_typed(data, "id", str),
        name=_typed(data, "name", str),
        arguments=data.get("arguments"),
        arguments_problem=_typed(data, "problem", str | None, None),
        raw=_typed(data, "raw", dict, {}),
    )


_REQUIRED = object()


def _typed(data: Mapping[str, Any], key: str, kind: Any, default: Any = _REQUIRED) -> Any:
    """``data[key]`` when it is of ``kind`` (``default`` when absent, if given); ValueError otherwise."""
    if key not in data:
        if default is _REQUIRED:
            raise ValueError(f"{key!r} is missing")
        return default
    value = data[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ValueError(f"{key!r} holds {type(value).__name__}, not what was written")
    return value
