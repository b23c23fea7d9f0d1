"""How the OpenAI-compatible backend streams an answer to time it: when, what to send, and what the stream measured.

A streamed answer is timed at its tokens' arrival, as vLLM's and guidellm's
benchmarks time them: the first token (queue wait and prompt processing
included), the last one, and the end of the answer. docs/measurement.md gives
the definitions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from tsuka_core.backends.base import ChatResponse
from tsuka_core.backends.plausible import plausible_rate
from tsuka_core.backends.streamed import StreamedAnswer
from tsuka_core.errors import BackendError

__all__ = ["STREAM_FIELDS", "STREAM_OPTIONS", "is_stream_refusal", "stream_option", "timed_by_stream"]

STREAM_FIELDS: Mapping[str, Any] = {"stream": True, "stream_options": {"include_usage": True}}
"""What a streamed request adds to the body: chunks as they are generated, and usage in the last one."""

_OPTION_VALUES = ("auto", "off")
STREAM_OPTIONS: Mapping[str, str] = {
    "stream": "auto (default): stream answers where the server reports no timings of its own; off: never stream",
}
"""The ``--option`` keys of the OpenAI-compatible backend."""


def stream_option(options: Mapping[str, str]) -> bool:
    """Whether ``--option stream=...`` lets the backend stream: ``auto`` (the default) does, ``off`` never."""
    value = options.get("stream", "auto").strip().lower()
    if value not in _OPTION_VALUES:
        raise BackendError(f"backend 'openai': --option stream takes auto or off, got {value[:40]!r}")
    return value == "auto"


def is_stream_refusal(status: int | None, message: str) -> bool:
    """True when an error answer (400, 422 or 501) says the server does not stream (this request, or at all)."""
    return status in (400, 422, 501) and "stream" in message.lower()


def timed_by_stream(response: ChatResponse, answer: StreamedAnswer) -> ChatResponse:
    """``response`` with the times its stream measured, unless the server timed it itself (llama.cpp ``timings``).

    Decode time runs from the first token's arrival to the last's and counts
    the completion tokens after the first; an answer whose tokens all came in
    one read has none to count. The time to the first token stands for the
    prompt time, so prefill speed is prompt tokens over it.
    """
    first, last = answer.first_token_s, answer.last_token_s
    if response.speed_source == "server" or first is None or last is None:
        return response
    first_ms = first * 1000
    decoded = response.completion_tokens - 1 if answer.token_arrivals > 1 else 0
    generation_ms = (last - first) * 1000 if decoded > 0 else 0.0
    if not plausible_rate(max(decoded, 0), generation_ms) or not plausible_rate(response.prompt_tokens or 0, first_ms):
        return response  # a usage count no stream could deliver in that time: its times are not reported
    return dataclasses.replace(
        response,
        first_token_ms=first_ms,
        generation_ms=generation_ms,
        generated_tokens=max(decoded, 0),
        prompt_ms=first_ms,
        prompt_processed=response.prompt_tokens,
        speed_source="stream",
    )
