"""What a model answered, normalised: the text checks see and the tool calls it made."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tsuka_core.judge.environment import TurnState
from tsuka_core.judge.jsontools import MISSING, REPAIR_BUDGET, json_type_name, repair_json
from tsuka_core.textsafe import scrub

__all__ = [
    "MAX_TOOL_CALLS",
    "Answer",
    "ToolCall",
    "normalise_tool_call",
    "normalise_tool_calls",
    "parse_arguments",
    "read_arguments",
    "strip_reasoning",
    "without_reasoning",
]

MAX_TOOL_CALLS = 64
"""Tool calls of one answer whose arguments are read; later ones keep their name, their arguments unread."""

_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"


def strip_reasoning(content: str | None) -> str:
    """Remove reasoning from answer text, as docs/contract.md §3 says, and strip white space.

    Every ``<think>…</think>`` block goes; an unclosed ``<think>`` cuts the rest;
    a lone ``</think>`` keeps only what follows it.
    """
    return without_reasoning(content).strip()


def without_reasoning(content: str | None) -> str:
    """Answer text with reasoning removed as :func:`strip_reasoning` removes it, white space kept."""
    if not content:
        return ""
    text = _without_think_blocks(content)
    if _THINK_OPEN in text:
        text = text[: text.index(_THINK_OPEN)]
    if _THINK_CLOSE in text:
        text = text[text.rindex(_THINK_CLOSE) + len(_THINK_CLOSE) :]
    return text


def _without_think_blocks(content: str) -> str:
    """Every ``<think>…</think>`` block removed, left to right, in linear time.

    A regular expression (``<think>.*?</think>``) does the same but rescans to
    the end from every unclosed ``<think>``: quadratic, minutes on hostile answers.
    """
    kept: list[str] = []
    pos = 0
    while (start := content.find(_THINK_OPEN, pos)) >= 0:
        end = content.find(_THINK_CLOSE, start + len(_THINK_OPEN))
        if end < 0:
            break
        kept.append(content[pos:start])
        pos = end + len(_THINK_CLOSE)
    kept.append(content[pos:])
    return "".join(kept)


def parse_arguments(raw: object, deadline: float | None = None) -> tuple[Any, str | None]:
    """Turn raw tool-call arguments into a JSON object, repairing a broken JSON string (by ``deadline``, if given).

    Returns ``(arguments, problem)``: ``problem`` is ``None`` when the arguments
    are a JSON object, else a short reason (and ``arguments`` what could be read).
    """
    value, problem, _repaired = read_arguments(raw, deadline)
    return value, problem


def read_arguments(raw: object, deadline: float | None = None) -> tuple[Any, str | None, bool]:
    """:func:`parse_arguments`, and whether the value came from repairing a string that was not valid JSON."""
    value: Any = raw
    repaired = False
    if isinstance(raw, str):
        if not raw.strip():
            return {}, None, False
        try:
            value = scrub(json.loads(raw))
        except RecursionError:
            return None, "tool arguments are nested too deeply to read", False
        except ValueError:
            value = repair_json(raw, deadline)  # bounded in time; MISSING when it cannot
            if value is MISSING or value == "" or value is None:
                return None, "tool arguments are not JSON", False
            repaired = True
    if isinstance(value, dict):
        return value, None, repaired
    return value, f"tool arguments are not a JSON object (got {_kind(value)})", repaired


def _kind(value: object) -> str:
    kind = json_type_name(value)
    return "number" if kind == "integer" else kind


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call: its id, the tool's name and its parsed arguments."""

    id: str
    name: str
    arguments: Any
    """The arguments as a JSON value; a dict unless ``arguments_problem`` says otherwise."""
    arguments_problem: str | None = None
    """Why the arguments are not a usable JSON object, or ``None``."""
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """The call as the server sent it, to send back unchanged in the next turn."""
    repaired: bool = False
    """True when the arguments the model wrote were not valid JSON and ``arguments`` is json-repair's reading."""

    @property
    def raw_arguments(self) -> str | None:
        """The arguments as the model wrote them, when the server sent them as a string."""
        function = self.raw.get("function")
        arguments = function.get("arguments") if isinstance(function, Mapping) else None
        return arguments if isinstance(arguments, str) else None


def normalise_tool_call(raw: Mapping[str, Any], index: int, deadline: float | None = None) -> ToolCall | None:
    """Build a ToolCall from an OpenAI-style entry; ``None`` when it names no function.

    Arguments that are not JSON are repaired by ``deadline`` (``time.monotonic()``), if given.
    """
    function = raw.get("function")
    if not isinstance(function, Mapping):
        return None
    name = function.get("name")
    if not isinstance(name, str) or not name:
        return None
    call_id = raw.get("id")
    if not isinstance(call_id, str) or not call_id:
        call_id = f"call_{index}"
    if index >= MAX_TOOL_CALLS:
        unread = f"not judged: the answer holds more than {MAX_TOOL_CALLS} tool calls"
        return ToolCall(id=call_id, name=name, arguments=None, arguments_problem=unread, raw=raw)
    arguments, problem, repaired = read_arguments(function.get("arguments"), deadline)
    return ToolCall(call_id, name, arguments, problem, raw, repaired)


def normalise_tool_calls(raw_calls: object) -> list[ToolCall]:
    """The ToolCalls of an OpenAI-style ``tool_calls`` list (entries naming no function left out).

    All repairs of one answer's arguments share one :data:`~tsuka_core.judge.jsontools.REPAIR_BUDGET`;
    the arguments of calls past :data:`MAX_TOOL_CALLS` are not read (their problem says so).
    """
    if not isinstance(raw_calls, list):
        return []
    deadline = time.monotonic() + REPAIR_BUDGET
    found = (normalise_tool_call(raw, i, deadline) for i, raw in enumerate(raw_calls) if isinstance(raw, Mapping))
    return [call for call in found if call is not None]


@dataclass(frozen=True, slots=True)
class Answer:
    """One answer as the checks see it."""

    text: str
    """The message content with reasoning removed and white space stripped."""
    tool_calls: tuple[ToolCall, ...] = ()
    tools: Sequence[Mapping[str, Any]] = ()
    """The tool schemas offered with the request (OpenAI function format)."""
    cut: bool = False
    """The server stopped the answer at the token limit (``finish_reason`` ``length``): no JSON or argument check
    passes it, whatever json-repair would make of what was written."""
    unstripped: str | None = None
    """The text before white space was stripped (reasoning removed), for checks that judge an answer exactly as
    written (IFEval's ``instruction``); None when it is :attr:`text`."""

    environment: TurnState | None = None
    """For a turn of a multi-turn test: what the turn left in its tool environment (results, state, differences)."""

    @property
    def as_written(self) -> str:
        """The text with its white space as written: :attr:`unstripped` when known, else :attr:`text`."""
        return self.text if self.unstripped is None else self.unstripped

    @property
    def first_call(self) -> ToolCall | None:
        """The first tool call of the answer, if any."""
        return self.tool_calls[0] if self.tool_calls else None
