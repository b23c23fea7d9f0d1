"""A message of the conversation as an OpenAI-compatible server accepts it back."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["NOT_SENT_BACK", "outgoing_message"]

NOT_SENT_BACK = ("reasoning_content", "reasoning")
"""Message fields that carry a model's reasoning: read from an answer, never sent back."""


def outgoing_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """A message as OpenAI-compatible servers accept it.

    An assistant's ``content: null`` becomes ``""`` (some servers reject null
    beside tool calls), tool-call arguments that are objects become JSON strings,
    and separate reasoning fields are dropped.
    """
    out = {k: v for k, v in message.items() if k not in NOT_SENT_BACK}
    if out.get("role") == "assistant" and out.get("content") is None:
        out["content"] = ""
    calls = out.get("tool_calls")
    if isinstance(calls, Sequence) and not isinstance(calls, str):
        out["tool_calls"] = [_outgoing_call(call) for call in calls]
    return out


def _outgoing_call(call: Any) -> Any:
    function = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping) or isinstance(function.get("arguments"), str):
        return call
    arguments = function.get("arguments")
    text = "{}" if arguments is None else json.dumps(arguments, ensure_ascii=False)
    return {**call, "function": {**function, "arguments": text}}
