"""Why an answer failed, when the kind is plain: a tool call left in the text, a wrong tool, bad arguments, a cut."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from tsuka_core.backends.base import ChatResponse
from tsuka_core.judge.answer import ToolCall
from tsuka_core.judge.textcalls import text_tool_call

__all__ = ["FAULT_FIELDS", "Fault", "answer_fault", "cut_detail"]

Fault = Literal["thinking_only", "cut", "in_text", "wrong_tool", "invalid_arguments", "missing_argument"]

FAULT_FIELDS: Mapping[Fault, str] = {
    "thinking_only": "thinkingOnly",
    "cut": "cutAtLimit",
    "in_text": "toolCallsInText",
    "wrong_tool": "wrongTool",
    "invalid_arguments": "invalidArguments",
    "missing_argument": "missingArgument",
}
"""Each kind's name in the profile's ``answerFaults`` counts."""

IN_TEXT = "tool call in the answer text, not parsed by the server"


def answer_fault(
    response: ChatResponse, tools: Sequence[Mapping[str, Any]], expected: str | None
) -> tuple[Fault, str] | None:
    """The kind of a failed answer and a one-line detail naming it; None when nothing plain went wrong.

    ``tools`` are the tools offered; ``expected`` the tool a ``tool_called`` check wanted, if any.
    """
    if response.cut_at_limit:
        thought = response.reasoning or "<think>" in (response.content or "")
        if not response.text and not response.tool_calls and thought:
            return "thinking_only", f"all {response.completion_tokens} tokens were spent thinking; no answer"
        return "cut", cut_detail(response)
    if not tools:
        return None
    if not response.tool_calls:
        name = text_tool_call(response.text)
        if name is None:
            return None
        return "in_text", f"{IN_TEXT} ({name})" if name else IN_TEXT
    return _call_fault(response.tool_calls[0], tools, expected)


def cut_detail(response: ChatResponse) -> str:
    """Which limit cut the answer: ``max_tokens``, or the server's context size when the answer stopped short of it.

    A server stops an answer with ``finish_reason: length`` both when it
    reaches the request's ``max_tokens`` and when prompt and answer fill its
    context (llama.cpp's ``-c``, per slot): they are lifted differently.
    """
    tokens, limit = response.completion_tokens, response.token_limit
    if limit is None or response.usage_estimated:
        return f"answer cut at the token limit (finish_reason: length, {tokens} tokens)"
    if tokens >= limit:
        return f"answer cut at max_tokens ({tokens} of {limit} tokens; raise --max-tokens)"
    prompt = f"{response.prompt_tokens} prompt + " if response.prompt_tokens is not None else ""
    return (
        f"answer cut at the server's context size, not max_tokens ({prompt}{tokens} answer tokens, "
        f"max_tokens {limit}; raise the server's context, llama-server -c, or its own token cap)"
    )


def _call_fault(call: ToolCall, tools: Sequence[Mapping[str, Any]], expected: str | None) -> tuple[Fault, str] | None:
    schemas = {name: _parameters(tool) for tool in tools if (name := _name(tool)) is not None}
    if (expected is not None and call.name != expected) or call.name not in schemas:
        wanted = f", expected {expected}" if expected else f" (offered: {', '.join(schemas)})"
        return "wrong_tool", f"wrong tool: called {call.name}{wanted}"
    if call.arguments_problem is not None:
        return "invalid_arguments", f"arguments of {call.name} cannot be used ({call.arguments_problem})"
    required = schemas[call.name].get("required")
    given = call.arguments if isinstance(call.arguments, Mapping) else {}
    missing = [r for r in required if isinstance(r, str) and r not in given] if isinstance(required, list) else []
    if missing:
        return "missing_argument", f"{call.name} lacks required argument(s): {', '.join(missing)}"
    return None


def _name(tool: Mapping[str, Any]) -> str | None:
    function = tool.get("function")
    name = function.get("name") if isinstance(function, Mapping) else None
    return name if isinstance(name, str) else None


def _parameters(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    function = tool.get("function")
    parameters = function.get("parameters") if isinstance(function, Mapping) else None
    return parameters if isinstance(parameters, Mapping) else {}
