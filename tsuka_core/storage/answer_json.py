"""An answer as the run history and the response cache store it: JSON that is read back strictly."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tsuka_core.backends.base import ChatResponse
from tsuka_core.judge.answer import ToolCall
from tsuka_core.plausible import token_count
from tsuka_core.textsafe import scrub

__all__ = ["response_from_json", "response_to_json"]


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
