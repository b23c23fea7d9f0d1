"""An answer as the run history and the response cache store it: JSON that is read back strictly."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
)
from pydantic.alias_generators import to_camel

from tsuka_core.backends.base import ChatResponse, SpeedSource
from tsuka_core.backends.plausible import MAX_MILLIS, millis, token_count
from tsuka_core.judge.answer import ToolCall
from tsuka_core.textsafe import scrub, scrub_text

__all__ = [
    "MAX_ANSWER_BYTES",
    "StoredAnswer",
    "StoredToolCall",
    "bounded_response_json",
    "response_from_json",
    "response_to_json",
]

MAX_ANSWER_BYTES = 1024 * 1024
"""The most the history stores of one answer; a larger one is cut, and marked ``cut``."""

Number = StrictInt | StrictFloat
"""A JSON number: ``true`` is not one."""


def _completion_tokens(value: Any) -> int:
    count = token_count(value)
    if count is None:
        raise ValueError("is not a token count")
    return count


def _a_time(value: float | None) -> float | None:
    if value is not None and millis(value) is None:
        raise ValueError(f"holds {value:.6g}, not a time in milliseconds")
    return value


def _seconds(value: float) -> float:
    if millis(value * 1000) is None:
        raise ValueError(f"holds {value:.6g}, not a time from 0 to {MAX_MILLIS / 1000:g} seconds")
    return value


Millis = Annotated[Number | None, AfterValidator(_a_time)]
"""A time in milliseconds a run could have measured: finite, from 0 to :data:`MAX_MILLIS`."""


class _Stored(BaseModel):
    model_config = ConfigDict(
        frozen=True, alias_generator=to_camel, populate_by_name=True, extra="ignore", use_attribute_docstrings=True
    )


class StoredToolCall(_Stored):
    """One tool call of a stored answer."""

    id: StrictStr
    name: StrictStr
    arguments: Any = None
    """The parsed arguments, any JSON value."""
    problem: StrictStr | None = None
    """Why the arguments are not a usable JSON object, or None."""
    raw: dict[str, Any] = Field(default_factory=dict)
    """The call as the server sent it."""
    repaired: StrictBool | None = None
    """True when the model's arguments were not valid JSON and ``arguments`` is their repair; None: not recorded."""

    def to_call(self) -> ToolCall:
        """The tool call as the judge sees it."""
        call = ToolCall(self.id, self.name, self.arguments, self.problem, self.raw, bool(self.repaired))
        if self.repaired is None and call.arguments_problem is None and call.raw_arguments is not None:
            # Written before "repaired" was kept: the arguments were repaired when the model's string is not JSON.
            return replace(call, repaired=not _is_json(call.raw_arguments))
        return call


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return not text.strip()  # an empty string reads as {}
    return True


class StoredAnswer(_Stored):
    """Everything of an answer needed to judge it again, under the camelCase names the history stores."""

    text: StrictStr
    content: StrictStr | None = None
    reasoning: StrictStr | None = None
    """The reasoning the server sent apart from the answer."""
    tool_calls: list[StoredToolCall] = Field(default_factory=list)
    prompt_tokens: Annotated[int | None, BeforeValidator(token_count)] = None
    completion_tokens: Annotated[int, BeforeValidator(_completion_tokens)] = 0
    usage_estimated: Annotated[StrictBool, BeforeValidator(bool)] = False
    """True when the token counts were estimated, not reported."""
    duration: Annotated[Number, AfterValidator(_seconds)] = 0.0
    """Seconds the answer took."""
    generation_ms: Millis = None
    generated_tokens: Annotated[int | None, BeforeValidator(token_count)] = None
    prompt_ms: Millis = None
    prompt_processed: Annotated[int | None, BeforeValidator(token_count)] = None
    first_token_ms: Millis = None
    speed_source: SpeedSource | None = None
    """Where the speed was measured: server, stream or wall (the default)."""
    reasoning_tokens: Annotated[int | None, BeforeValidator(token_count)] = None
    finish_reason: StrictStr | None = None
    rendered_prompt: StrictStr | None = None
    """The prompt as the model's chat template rendered it, where the backend knows it."""


_MEASURED = (
    "generation_ms",
    "generated_tokens",
    "prompt_ms",
    "prompt_processed",
    "first_token_ms",
    "speed_source",
    "reasoning_tokens",
    "finish_reason",
    "rendered_prompt",
)
"""What the backend reported of an answer beyond its text (timings, counts, the rendered prompt): stored only
when known."""


def response_to_json(response: ChatResponse) -> dict[str, Any]:
    """Everything of an answer needed to judge it again: text, content, reasoning apart, tool calls, usage, time."""
    calls = [
        {
            "id": c.id,
            "name": c.name,
            "arguments": c.arguments,
            "problem": c.arguments_problem,
            "raw": dict(c.raw),
            **({"repaired": True} if c.repaired else {}),
        }
        for c in response.tool_calls
    ]
    fields = {
        "text": response.text,
        "content": response.content,
        "reasoning": response.reasoning,
        "tool_calls": calls,
        "prompt_tokens": response.prompt_tokens,
        "completion_tokens": response.completion_tokens,
        "usage_estimated": response.usage_estimated,
        "duration": response.duration,
        **{name: value for name in _MEASURED if (value := getattr(response, name)) is not None},
    }
    return {StoredAnswer.model_fields[name].alias or name: value for name, value in fields.items()}


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
        **({"renderedPrompt": _clipped(data["renderedPrompt"], share)} if "renderedPrompt" in data else {}),
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
    try:
        stored = StoredAnswer.model_validate(scrub(dict(data)), by_alias=True, by_name=False)
    except ValidationError as exc:
        raise ValueError(_first_problem(exc)) from None
    measured = {name: value for name in _MEASURED if (value := getattr(stored, name)) is not None}
    return ChatResponse(
        text=stored.text,
        tool_calls=tuple(call.to_call() for call in stored.tool_calls),
        content=stored.content,
        reasoning=stored.reasoning,
        prompt_tokens=stored.prompt_tokens,
        completion_tokens=stored.completion_tokens,
        usage_estimated=stored.usage_estimated,
        duration=float(stored.duration),
        **measured,
    )


_UNION_TAGS = frozenset({"int", "float", "str", "bool", "none"})
"""The names pydantic puts in an error's location for the member of a union that was tried."""


def _first_problem(exc: ValidationError) -> str:
    """The first field that is not what was written, as one line: ``'toolCalls[0].id' is missing``."""
    error = exc.errors()[0]
    parts = [p for p in error["loc"] if not (isinstance(p, str) and (p in _UNION_TAGS or "[" in p))]
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".") or "the answer"
    where = f"'{where}'"
    if error["type"] == "missing":
        return f"{where} is missing"
    found = type(error["input"]).__name__
    return f"{where} holds {found}, not what was written ({error['msg'].removeprefix('Value error, ')})"
