"""Why an answer failed, when the kind is plain: one of the failure kinds of docs/contract.md, and a detail."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Literal

from tsuka_core.backends.base import ChatResponse
from tsuka_core.judge.answer import ToolCall
from tsuka_core.judge.textcalls import text_tool_call

__all__ = [
    "FAULT_FIELDS",
    "FAULT_LABELS",
    "Fault",
    "answer_fault",
    "cut_detail",
    "fault_counts",
    "fault_label",
    "faults_line",
]

Fault = Literal[
    "thinking_only",
    "cut",
    "abstained",
    "in_text",
    "invalid_arguments",
    "wrong_tool",
    "missing_argument",
    "wrong_arguments",
    "call_count",
]

FAULT_FIELDS: Mapping[Fault, str] = {
    "thinking_only": "thinkingOnly",
    "cut": "cutAtLimit",
    "abstained": "abstained",
    "in_text": "toolCallsInText",
    "invalid_arguments": "invalidArguments",
    "wrong_tool": "wrongTool",
    "missing_argument": "missingArgument",
    "wrong_arguments": "wrongArguments",
    "call_count": "extraOrMissingCalls",
}
"""Each kind's name in the profile's ``answerFaults`` counts."""

FAULT_LABELS: Mapping[str, str] = {
    "thinkingOnly": "empty after thinking",
    "cutAtLimit": "cut at the limit",
    "abstained": "abstained",
    "toolCallsInText": "call left in the text",
    "invalidArguments": "malformed call",
    "wrongTool": "wrong tool",
    "missingArgument": "missing argument",
    "wrongArguments": "wrong arguments",
    "extraOrMissingCalls": "extra or missing calls",
}
"""Each ``answerFaults`` name as the summary, ``tsuka show`` and the report say it."""


def fault_counts(kinds: Iterable[str | None]) -> dict[str, int]:
    """``answerFaults`` counts of steps' fault kinds (None and unknown kinds left out), in the kinds' order."""
    found = Counter(kinds)
    return {name: found[kind] for kind, name in FAULT_FIELDS.items() if found[kind]}


def fault_label(kind: str | None) -> str | None:
    """How a step's fault kind (``cut``, ``in_text``...) is said, or None for none or an unknown one."""
    name = next((n for k, n in FAULT_FIELDS.items() if k == kind), None)
    return FAULT_LABELS[name] if name is not None else None


def faults_line(counts: Mapping[str, Any]) -> str:
    """``2 malformed call, 1 cut at the limit`` from ``answerFaults`` counts; empty when there are none."""
    shown = [(FAULT_LABELS[name], n) for name, n in counts.items() if name in FAULT_LABELS and isinstance(n, int)]
    return ", ".join(f"{n} {label}" for label, n in shown if n > 0)


IN_TEXT = "tool call in the answer text, not parsed by the server"


def answer_fault(
    response: ChatResponse, tools: Sequence[Mapping[str, Any]], expected: str | None, failed: Collection[str] = ()
) -> tuple[Fault, str] | None:
    """The kind of a failed answer and a one-line detail naming it; None when nothing plain went wrong.

    ``tools`` are the tools offered; ``expected`` the tool a ``names_tool`` check wanted, if any;
    ``failed`` the roles (``CheckType.roles``) of the step's checks that failed.
    """
    if not response.text and not response.tool_calls and _thought(response):
        spent = response.reasoning_tokens or response.completion_tokens
        return "thinking_only", f"no answer after {spent} reasoning tokens"
    if response.cut_at_limit:
        return "cut", cut_detail(response)
    if not tools:
        return None
    if not response.tool_calls:
        name = text_tool_call(response.text)
        if name is not None:
            return "in_text", f"{IN_TEXT} ({name})" if name else IN_TEXT
        if "expects_call" in failed:
            return "abstained", f"abstained: answered without calling {expected or 'a tool'}"
        return None
    if "forbids_call" in failed:
        return "call_count", f"called {_names(response.tool_calls)} where no call was wanted"
    malformed = next((c for c in response.tool_calls if c.arguments_problem is not None), None)
    if malformed is not None and malformed is not response.tool_calls[0]:
        return "invalid_arguments", f"arguments of {malformed.name} cannot be used ({malformed.arguments_problem})"
    found = _call_fault(response.tool_calls[0], tools, expected)
    if found is not None:
        return found
    if "counts_calls" in failed:
        return "call_count", f"{len(response.tool_calls)} tool call(s): {_names(response.tool_calls)}"
    if "judges_arguments" in failed:
        return "wrong_arguments", f"wrong arguments: {_names(response.tool_calls)}"
    return None


def _thought(response: ChatResponse) -> bool:
    """True when the answer holds reasoning: a separate field, a ``<think>`` block, or reasoning tokens counted."""
    return bool(response.reasoning or "<think>" in (response.content or "") or response.reasoning_tokens)


def _names(calls: Sequence[ToolCall]) -> str:
    return ", ".join(c.name for c in calls)


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
