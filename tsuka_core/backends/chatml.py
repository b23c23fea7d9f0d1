"""ChatML prompts with text tool calls, for models that have no native tool calling.

A conversation in OpenAI message format becomes one ChatML prompt
(``<|im_start|>role\\n…<|im_end|>\\n`` per message, ending with an open
assistant turn), and the model's reply is parsed back into text and tool calls.

Tools are offered in the system message: one line per tool,
``name(arg: type, other?: type) -> description``, then the call syntax::

    <tool_call>{"name": "TOOL NAME", "arguments": {"ARGUMENT": "VALUE"}}</tool_call>

A description alone is not enough for a small model (SmolLM2-135M almost never
answers with a call from it), so one example exchange follows the system
message, built from the first offered tool's schema: the user asks
``Use the tool find_user with name "abc"`` and the assistant answers with the
matching ``<tool_call>``. Example values come from the schema (``enum``,
``default``, else by type: ``"abc"``, ``1``, ``1.5``, ``true``, ``[]``, ``{}``).

Earlier assistant tool calls are rendered back in the same syntax, one per
line after any text; a tool result becomes a ``tool`` turn holding the result
text as it is. (SmolLM2-135M copied a result wrapped in ``<tool_response>``
tags back word for word, in a ``tool`` turn as in a ``user`` turn; given bare,
it made the expected follow-up call in the reference suite's write-then-append
test.)

Parsing follows what Ollama and vLLM do for Hermes-style models: reasoning is
removed first (a call inside ``<think>`` is not a call), then every
``<tool_call>…</tool_call>`` (the close tag may be missing at the end) whose body
is a JSON object with a string ``name`` becomes a call, with ``arguments`` (or
``parameters``; absent means ``{}``) normalised like any server's. A body that is
not strict JSON is repaired with json-repair and kept only if it then has both a
name and arguments. Anything else is not a call and stays in the answer text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from tsuka_core.judge.answer import ToolCall, parse_arguments, strip_reasoning

__all__ = [
    "IM_END",
    "IM_START",
    "STOP",
    "example_exchange",
    "parse_tool_calls",
    "render_prompt",
    "render_tool_call",
    "tool_signature",
    "tools_instructions",
]

IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
STOP: tuple[str, ...] = (IM_END,)
"""Stop strings for a completion of :func:`render_prompt`'s prompt."""

CALL_OPEN = "<tool_call>"
CALL_CLOSE = "</tool_call>"
_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|(?=<tool_call>)|\Z)", re.DOTALL)

_INTRO_ONE = "You are a function-calling assistant. You have one tool:"
_INTRO_MANY = "You are a function-calling assistant. You have these tools:"
_SYNTAX = (
    "When a tool is needed, respond with a tool call and nothing else, in exactly this format:\n"
    '<tool_call>{"name": "TOOL NAME", "arguments": {"ARGUMENT": "VALUE"}}</tool_call>'
)
_EXAMPLE_BY_TYPE: dict[str, Any] = {
    "string": "abc",
    "integer": 1,
    "number": 1.5,
    "boolean": True,
    "array": [],
    "object": {},
    "null": None,
}


def _turn(role: str, content: str) -> str:
    return f"{IM_START}{role}\n{content}{IM_END}\n"


def _content_text(content: object) -> str:
    """Message content as text: a string, ``None``, or a list of typed parts (their ``text`` joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = [part.get("text") for part in content if isinstance(part, Mapping)]
        return "".join(part for part in parts if isinstance(part, str))
    return str(content)


def _function(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    """The function part of an OpenAI tool schema (or the schema itself when it has no wrapper)."""
    function = tool.get("function")
    return function if isinstance(function, Mapping) else tool


def _parameters(function: Mapping[str, Any]) -> tuple[Mapping[str, Any], list[str]]:
    """The ``properties`` of a function's parameters and the names it requires."""
    parameters = function.get("parameters")
    if not isinstance(parameters, Mapping):
        return {}, []
    properties = parameters.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = parameters.get("required")
    names = [name for name in required if name in properties] if isinstance(required, list) else []
    return properties, names


def _type_name(schema: object) -> str:
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    if isinstance(kind, list):
        kind = next((item for item in kind if item != "null"), None)
    return kind if isinstance(kind, str) else "any"


def tool_signature(tool: Mapping[str, Any]) -> str:
    """One line describing a tool: ``name(arg: type, optional?: type) -> description``."""
    function = _function(tool)
    properties, required = _parameters(function)
    arguments = ", ".join(
        f"{name}{'' if name in required else '?'}: {_type_name(schema)}" for name, schema in properties.items()
    )
    description = " ".join(str(function.get("description") or "").split())
    line = f"{function.get('name', '')}({arguments})"
    return f"{line} -> {description}" if description else line


def tools_instructions(tools: Sequence[Mapping[str, Any]]) -> str:
    """The system-message text that offers ``tools`` and states the call syntax."""
    intro = _INTRO_ONE if len(tools) == 1 else _INTRO_MANY
    return "\n".join([intro, *(tool_signature(tool) for tool in tools), _SYNTAX])


def _example_value(schema: object) -> Any:
    if isinstance(schema, Mapping):
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            return enum[0]
        if "default" in schema:
            return schema["default"]
    return _EXAMPLE_BY_TYPE.get(_type_name(schema), "abc")


def render_tool_call(name: str, arguments: object) -> str:
    """One call in the documented syntax: ``<tool_call>{"name": …, "arguments": …}</tool_call>``."""
    body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"{CALL_OPEN}{body}{CALL_CLOSE}"


def example_exchange(tool: Mapping[str, Any]) -> tuple[str, str]:
    """A user request and the assistant's call for ``tool``, built from its schema (its required arguments)."""
    function = _function(tool)
    name = str(function.get("name", ""))
    properties, required = _parameters(function)
    arguments = {argument: _example_value(properties[argument]) for argument in required}
    ask = f"Use the tool {name}"
    if arguments:
        pairs = (f"{key} {json.dumps(value, ensure_ascii=False)}" for key, value in arguments.items())
        ask += " with " + ", ".join(pairs)
    return ask, render_tool_call(name, arguments)


def _call_arguments(raw: object) -> object:
    """Arguments of an OpenAI-style call as a JSON value (a string is parsed, repaired if need be)."""
    if isinstance(raw, str):
        value, _ = parse_arguments(raw)
        return raw if value is None else value
    return raw if raw is not None else {}


def _assistant_text(message: Mapping[str, Any]) -> str:
    parts = [_content_text(message.get("content")).strip()]
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, Sequence) and not isinstance(calls, str) else ():
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping):
            parts.append(render_tool_call(str(function.get("name", "")), _call_arguments(function.get("arguments"))))
    return "\n".join(part for part in parts if part)


def _render_message(message: Mapping[str, Any]) -> str:
    role = str(message.get("role", "user"))
    if role == "assistant":
        return _turn(role, _assistant_text(message))
    return _turn(role, _content_text(message.get("content")))


def render_prompt(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = ()) -> str:
    """The ChatML prompt for a conversation, with ``tools`` offered, ending with an open assistant turn.

    The first message's system text (if any) comes first in the system message,
    then the tool instructions; the example exchange follows it.
    """
    rest = list(messages)
    system = ""
    if rest and rest[0].get("role") == "system":
        system = _content_text(rest.pop(0).get("content"))
    prompt = ""
    if tools:
        system = "\n\n".join(part for part in (system.strip(), tools_instructions(tools)) if part)
        ask, call = example_exchange(tools[0])
        prompt = _turn("system", system) + _turn("user", ask) + _turn("assistant", call)
    elif system:
        prompt = _turn("system", system)
    prompt += "".join(_render_message(message) for message in rest)
    return f"{prompt}{IM_START}assistant\n"


def _read_call(body: str) -> tuple[str, object] | None:
    """``(name, raw arguments)`` from a call body, or ``None`` when it is not a call."""
    try:
        value = json.loads(body)
        repaired = False
    except ValueError:
        import json_repair  # loaded on the first call that is not strict JSON

        try:
            value = json_repair.loads(body)
        except Exception:  # json-repair promises not to raise; never trust a parser with model output
            return None
        repaired = True
    if not isinstance(value, dict):
        return None
    name = value.get("name")
    key = "arguments" if "arguments" in value else "parameters"
    if not isinstance(name, str) or not name.strip() or (repaired and key not in value):
        return None
    return name.strip(), value.get(key, {})


def _tool_call(name: str, raw_arguments: object, index: int) -> ToolCall:
    arguments, problem = parse_arguments(raw_arguments)
    text = raw_arguments if isinstance(raw_arguments, str) else json.dumps(raw_arguments, ensure_ascii=False)
    call_id = f"call_{index}"
    raw = {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}
    return ToolCall(id=call_id, name=name, arguments=arguments, arguments_problem=problem, raw=raw)


def parse_tool_calls(content: str | None) -> tuple[str, tuple[ToolCall, ...]]:
    """Split a model's reply into answer text and tool calls (ids ``call_0``, ``call_1``, …).

    Reasoning is removed first (as checks see it), then each well-formed call is
    taken out of the text; malformed call text is not a call and stays.
    Never raises.
    """
    visible = strip_reasoning(content)
    calls: list[ToolCall] = []
    kept: list[str] = []
    position = 0
    for match in _CALL.finditer(visible):
        found = _read_call(match.group(1).strip())
        if found is None:
            continue
        kept.append(visible[position : match.start()])
        position = match.end()
        calls.append(_tool_call(found[0], found[1], len(calls)))
    kept.append(visible[position:])
    return "".join(kept).strip(), tuple(calls)
