"""What OpenAI-compatible servers report beyond the standard answer: llama.cpp timings and /props, usage details."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tsuka_core.backends.base import Backend, ServerFacts
from tsuka_core.backends.plausible import millis, plausible_rate, token_count

__all__ = ["TIMINGS_DROPPED", "count", "facts_from_props", "reasoning_tokens", "server_timings", "timings_dropped"]


def count(value: Any) -> int | None:
    """``value`` as a token count when it is a plausible one (see :func:`token_count`), else None."""
    return token_count(value)


def server_timings(data: Mapping[str, Any]) -> dict[str, Any]:
    """ChatResponse fields from llama.cpp's ``timings`` object; empty when the answer has none.

    ``predicted_ms`` / ``predicted_n`` time the generation alone, ``prompt_ms`` /
    ``prompt_n`` the prompt tokens the server had to process (its prompt cache
    excluded); neither includes time spent queued for a free slot. The prompt
    time stands for the time to the first token.
    """
    timings = data.get("timings")
    if not isinstance(timings, Mapping):
        return {}
    generation_ms, generated = millis(timings.get("predicted_ms")), count(timings.get("predicted_n"))
    prompt_ms, processed = millis(timings.get("prompt_ms")), count(timings.get("prompt_n"))
    fields: dict[str, Any] = {}
    if generation_ms is not None and generated is not None and plausible_rate(generated, generation_ms):
        fields.update(generation_ms=generation_ms, generated_tokens=generated, speed_source="server")
    if prompt_ms is not None and (processed is None or plausible_rate(processed, prompt_ms)):
        fields.update(prompt_ms=prompt_ms, prompt_processed=processed, first_token_ms=prompt_ms)
    return fields


TIMINGS_DROPPED = (
    "the server's timings could not be true (a rate past 10,000,000 tokens per second, or tokens in no time): "
    "they are kept as not reported, and speed comes from the stream or wall time"
)
"""The note a backend gives, once, when :func:`timings_dropped` holds."""


def timings_dropped(data: Mapping[str, Any]) -> bool:
    """True when an answer carried llama.cpp ``timings`` that :func:`server_timings` could not take as true."""
    timings = data.get("timings")
    if not isinstance(timings, Mapping):
        return False
    taken = server_timings(data)
    return ("predicted_ms" in timings and "speed_source" not in taken) or (
        "prompt_ms" in timings and "prompt_ms" not in taken
    )


def reasoning_tokens(usage: Mapping[str, Any]) -> int | None:
    """``usage.completion_tokens_details.reasoning_tokens``, where the server counts reasoning apart."""
    details = usage.get("completion_tokens_details")
    return count(details.get("reasoning_tokens")) if isinstance(details, Mapping) else None


def facts_from_props(props: Mapping[str, Any]) -> ServerFacts:
    """What llama.cpp's ``GET /props`` says: build, model file, slots and the chat template's capabilities.

    An answer without any of llama.cpp's own keys is not llama.cpp's: no facts.
    """
    if not any(key in props for key in ("total_slots", "build_info", "chat_template_caps", "model_path")):
        return ServerFacts()
    caps = props.get("chat_template_caps")
    caps = caps if isinstance(caps, Mapping) else {}
    build, path = props.get("build_info"), props.get("model_path")
    slots = count(props.get("total_slots"))
    return ServerFacts(
        kind="llama.cpp",
        version=build if isinstance(build, str) and build else None,
        model_file=path if isinstance(path, str) and path else None,
        slots=slots if slots else None,
        supports_tools=_flag(caps.get("supports_tools")),
        supports_parallel_tool_calls=_flag(caps.get("supports_parallel_tool_calls")),
        supports_reasoning_effort=_flag(caps.get("supports_reasoning_effort")),
    )


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def note_dropped_timings(backend: Backend, data: object) -> None:
    """Tell ``backend``'s notes, once, that an answer's timings could not be true (:data:`TIMINGS_DROPPED`)."""
    if not backend.__dict__.get("_said_timings") and isinstance(data, Mapping) and timings_dropped(data):
        backend.__dict__["_said_timings"] = True
        backend.add_note(f"{backend.provider}: {TIMINGS_DROPPED}")
