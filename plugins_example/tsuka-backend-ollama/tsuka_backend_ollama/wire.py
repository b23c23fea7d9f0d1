"""Ollama's wire format: OpenAI-style messages and tools turned into ``/api/chat`` fields, and its answers read back."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tsuka_core import (
    ChatResponse,
    RequestError,
    ToolCall,
    estimate_tokens,
    normalise_tool_call,
    parse_arguments,
    strip_reasoning,
)

__all__ = ["DecodeTiming", "ollama_messages", "ollama_tools", "parse_chat", "server_timings"]

_TIER_KEY = "requiredTier"
MAX_TOKENS = 10_000_000
"""The largest token count taken as reported; a larger (absurd) one is treated as missing, so estimated."""


@dataclass(frozen=True)
class DecodeTiming:
    """How fast the server generated one answer: its own count of generated tokens and the time it took."""

    tokens: int
    seconds: float


def _text(content: Any) -> str:
    """Message content as one string: text parts of a list joined, null as empty."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = (part.get("text") if isinstance(part, Mapping) else part for part in content)
        return "".join(part for part in parts if isinstance(part, str))
    return json.dumps(content, ensure_ascii=False)


def _ollama_call(call: Any) -> dict[str, Any] | None:
    """An OpenAI-style tool call as Ollama takes it back: ``{"function": {"name", "arguments": {...}}}``."""
    function = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
        return None
    arguments, problem = parse_arguments(function.get("arguments"))
    return {"function": {"name": function["name"], "arguments": arguments if problem is None else {}}}


def ollama_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-style messages as ``/api/chat`` takes them.

    Assistant tool calls carry their arguments as JSON objects; a ``tool``
    message names the tool it answers in ``tool_name`` (looked up by its
    ``tool_call_id``); separate reasoning fields are never sent back.
    """
    names: dict[str, str] = {}
    converted: list[dict[str, Any]] = []
    for message in messages:
        role = str(message.get("role", "user"))
        entry: dict[str, Any] = {"role": role, "content": _text(message.get("content"))}
        calls = message.get("tool_calls")
        if role == "assistant" and isinstance(calls, list) and calls:
            for call in calls:
                if isinstance(call, Mapping) and isinstance(call.get("id"), str):
                    function = call.get("function")
                    if isinstance(function, Mapping) and isinstance(function.get("name"), str):
                        names[call["id"]] = function["name"]
            entry["tool_calls"] = [found for found in map(_ollama_call, calls) if found is not None]
        if role == "tool":
            name = names.get(str(message.get("tool_call_id")), message.get("name"))
            if isinstance(name, str) and name:
                entry["tool_name"] = name
        converted.append(entry)
    return converted


def ollama_tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The test's tools in Ollama's format (OpenAI's function schema), without tsuka's ``requiredTier``."""
    found: list[dict[str, Any]] = []
    for tool in tools:
        entry = {k: v for k, v in tool.items() if k != _TIER_KEY}
        function = entry.get("function")
        if isinstance(function, Mapping):
            entry["function"] = {k: v for k, v in function.items() if k != _TIER_KEY}
        found.append(entry)
    return found


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _tokens(value: Any) -> int | None:
    count = _count(value)
    return count if count is not None and count <= MAX_TOKENS else None


def _tool_calls(raw_calls: Any) -> tuple[ToolCall, ...]:
    """The answer's tool calls; arguments arrive as objects, ids are made up (``call_N``) when absent."""
    if not isinstance(raw_calls, list):
        return ()
    calls: list[ToolCall] = []
    for index, raw in enumerate(raw_calls):
        if not isinstance(raw, Mapping):
            continue
        entry = {"type": "function", **raw}
        if not isinstance(entry.get("id"), str) or not entry["id"]:
            entry["id"] = f"call_{index}"
        call = normalise_tool_call(entry, index)
        if call is not None:
            calls.append(call)
    return tuple(calls)


def _generated_text(content: str, thinking: str | None, calls: Sequence[ToolCall]) -> str:
    arguments = "".join(call.name + json.dumps(call.arguments, ensure_ascii=False) for call in calls)
    return content + (thinking or "") + arguments


def server_timings(data: Mapping[str, Any], generated: int | None) -> dict[str, Any]:
    """ChatResponse fields from Ollama's ``eval_duration`` and ``prompt_eval_*``; empty when it sent none."""
    fields: dict[str, Any] = {}
    eval_ns = _count(data.get("eval_duration"))
    if generated is not None and eval_ns:
        fields.update(generation_ms=eval_ns / 1e6, generated_tokens=generated, speed_source="server")
    prompt_ns = _count(data.get("prompt_eval_duration"))
    if prompt_ns is not None:
        prompt_ms = prompt_ns / 1e6
        fields.update(prompt_ms=prompt_ms, prompt_processed=_count(data.get("prompt_eval_count")))
        fields["first_token_ms"] = prompt_ms
    return fields


def _finish_reason(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def parse_chat(data: Any, label: str, duration: float) -> tuple[ChatResponse, DecodeTiming | None]:
    """Read a non-streamed ``/api/chat`` answer into a ChatResponse, and the server's decode timing if it sent one.

    ``message.thinking`` is reasoning (kept apart, never checked); usage comes
    from ``prompt_eval_count`` and ``eval_count`` (estimated from the text when
    absent); ``duration`` is the wall time of the request. ``eval_duration`` and
    ``prompt_eval_duration`` (nanoseconds) are the server's own generation and
    prompt times, and ``done_reason`` why it stopped.
    """
    message = data.get("message") if isinstance(data, Mapping) else None
    if not isinstance(message, Mapping):
        error = data.get("error") if isinstance(data, Mapping) else None
        reason = f"the server said: {error}" if isinstance(error, str) else "the answer has no message"
        raise RequestError(f"{label}: {reason}")
    content = _text(message.get("content"))
    thinking = message.get("thinking") if isinstance(message.get("thinking"), str) else None
    calls = _tool_calls(message.get("tool_calls"))
    completion = _tokens(data.get("eval_count"))
    tokens = completion if completion is not None else estimate_tokens(_generated_text(content, thinking, calls))
    response = ChatResponse(
        text=strip_reasoning(content),
        tool_calls=calls,
        content=content,
        reasoning=thinking or None,
        prompt_tokens=_tokens(data.get("prompt_eval_count")),
        completion_tokens=tokens,
        usage_estimated=completion is None,
        duration=duration,
        finish_reason=_finish_reason(data.get("done_reason")),
        **server_timings(data, completion),
    )
    nanoseconds = _count(data.get("eval_duration"))
    timing = DecodeTiming(completion, nanoseconds / 1e9) if completion is not None and nanoseconds else None
    return response, timing
