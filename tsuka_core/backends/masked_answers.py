"""Every secret masked in what a server sent back: an answer's text and tool calls, the facts it gave of itself."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from tsuka_core.backends.base import ChatResponse, ServerFacts
from tsuka_core.judge.answer import ToolCall
from tsuka_core.masking import MASK, mask_json
from tsuka_core.secret_search import SecretFinder, finder

__all__ = ["masked_facts", "masked_response"]


def masked_response(response: ChatResponse, secrets: Sequence[str]) -> ChatResponse:
    """``response`` with every secret masked in its text, content, reasoning and tool calls (names, arguments,
    the call as sent), in any form a server can echo it; the same object when none holds one."""
    found = finder(secrets)
    if not found:
        return response
    texts: dict[str, Any] = {
        name: masked
        for name in ("text", "content", "reasoning")
        if isinstance(value := getattr(response, name), str) and (masked := found.mask(value, MASK)) is not value
    }
    calls = tuple(_masked_call(call, found, secrets) for call in response.tool_calls)
    changed = any(new is not old for new, old in zip(calls, response.tool_calls, strict=True))
    if not texts and not changed:
        return response
    return replace(response, **texts, tool_calls=calls)


def _masked_call(call: ToolCall, found: SecretFinder, secrets: Sequence[str]) -> ToolCall:
    fields: dict[str, Any] = {
        "id": found.mask(call.id, MASK),
        "name": found.mask(call.name, MASK),
        "arguments": mask_json(call.arguments, secrets),
        "raw": mask_json(call.raw, secrets),
        "arguments_problem": None if call.arguments_problem is None else found.mask(call.arguments_problem, MASK),
    }
    if all(value is getattr(call, name) for name, value in fields.items()):
        return call
    return replace(call, **fields)


def masked_facts(facts: ServerFacts, secrets: Sequence[str]) -> ServerFacts:
    """``facts`` with every secret masked in the text the server gave (kind, version, model file)."""
    found = finder(secrets)
    texts: dict[str, Any] = {
        name: masked
        for name in ("kind", "version", "model_file")
        if isinstance(value := getattr(facts, name), str) and (masked := found.mask(value, MASK)) is not value
    }
    return replace(facts, **texts) if texts else facts
