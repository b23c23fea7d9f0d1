"""What a step keeps of a large answer once it has been judged: its start, its size and a digest, not all of it.

A level's results live until the model's levels are stored and recorded, and
the history keeps at most a megabyte of each answer; holding every answer
whole would let a suite of long answers fill the memory, whatever the
concurrency. An answer whose text, content, reasoning and tool-call arguments
together pass :data:`KEEP_CHARS` characters is kept shortened: each long part
cut to :data:`PART_CHARS` characters, the content ending with a line that
gives its full length and a digest (so two different answers still compare
different), and the step notes the answer's size so that the history marks it
cut. Token counts, timings and the finish reason are kept whole.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from tsuka_core.backends.base import ChatResponse
from tsuka_core.judge.answer import ToolCall

__all__ = ["KEEP_CHARS", "PART_CHARS", "kept_answer", "kept_messages"]

KEEP_CHARS = 1024 * 1024
"""An answer longer than this, all parts together, is kept shortened."""
PART_CHARS = 128 * 1024
"""How much of each long part a shortened answer keeps."""


def kept_answer(response: ChatResponse) -> tuple[ChatResponse, int | None]:
    """``response`` as a step keeps it, and its length in characters when it was shortened (None: whole)."""
    size = _size(response)
    if size <= KEEP_CHARS:
        return response, None
    content = response.content
    if content is not None and len(content) > PART_CHARS:
        digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        content = f"{content[:PART_CHARS]}\n[kept {PART_CHARS:,} of {len(content):,} characters; sha256 {digest}]"
    shortened = replace(
        response,
        text=response.text[:PART_CHARS],
        content=content,
        reasoning=response.reasoning[:PART_CHARS] if response.reasoning is not None else None,
        tool_calls=tuple(_kept_call(call) for call in response.tool_calls),
    )
    return shortened, size


def kept_messages(messages: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    """The conversation a step keeps: as sent, or, past :data:`KEEP_CHARS` in all, each long text cut.

    The messages of a later step hold the earlier answers whole (they are sent back), so a step keeps them as it
    keeps an answer: every string longer than its share (at most :data:`PART_CHARS`, less with many messages)
    cut to that share and ended with its full length and a digest. What a step keeps is always within what the
    history stores of a step.
    """
    if _chars(messages) <= KEEP_CHARS:
        return messages
    share = min(PART_CHARS, KEEP_CHARS // max(len(messages), 1))
    return tuple(_cut_strings(dict(message), share) for message in messages)


def _chars(value: Any) -> int:
    pending, total = [value], 0
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, Mapping):
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
    return total


def _cut_strings(value: Any, share: int) -> Any:
    if isinstance(value, str) and len(value) > share:
        digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return f"{value[:share]}\n[kept {share:,} of {len(value):,} characters; sha256 {digest}]"
    if isinstance(value, Mapping):
        return {k: _cut_strings(v, share) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_cut_strings(v, share) for v in value]
    return value


def _size(response: ChatResponse) -> int:
    parts = (response.text, response.content or "", response.reasoning or "")
    return sum(map(len, parts)) + sum(_arguments_chars(call) for call in response.tool_calls)


def _arguments_chars(call: ToolCall) -> int:
    arguments = call.arguments
    if isinstance(arguments, str):
        return len(arguments)
    return len(json.dumps(arguments, ensure_ascii=False, default=str))


def _kept_call(call: ToolCall) -> ToolCall:
    if _arguments_chars(call) <= PART_CHARS:
        return call
    text = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments, default=str)
    return replace(call, arguments=text[:PART_CHARS], raw={}, arguments_problem="cut to bound memory")
