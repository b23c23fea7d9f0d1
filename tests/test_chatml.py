"""ChatML rendering of conversations with tools, and parsing tool calls out of generated text."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tsuka_core.backends.chatml import (
    example_exchange,
    parse_tool_calls,
    render_prompt,
    render_tool_call,
    tool_signature,
    tools_instructions,
)

FIND_USER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "find_user",
        "description": "Find a user's id\nfrom their full name.",
        "parameters": {
            "type": "object",
            "properties": {"name": {"type": "string", "description": "Full name"}},
            "required": ["name"],
        },
    },
}
WRITE_FILE: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "write_file",
        "description": "Write a file.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "content": {"type": "string"},
                "append": {"type": "boolean"},
                "mode": {"type": "string", "enum": ["text", "binary"]},
                "size": {"type": ["integer", "null"], "default": 3},
            },
            "required": ["path", "append", "mode", "size"],
        },
    },
    "requiredTier": "medium",
}


def call_text(name: str, arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


# rendering


def test_plain_conversation_is_chatml_ending_with_an_open_assistant_turn() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": [{"type": "text", "text": "What is "}, {"type": "text", "text": "2+2?"}]},
    ]
    assert render_prompt(messages) == (
        "<|im_start|>system\nBe brief.<|im_end|>\n"
        "<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\nHello.<|im_end|>\n"
        "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_no_system_message_is_invented_without_tools() -> None:
    assert render_prompt([{"role": "user", "content": "Hi"}]) == (
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    )


def test_tool_signature_lists_arguments_with_types_and_optional_marks() -> None:
    assert tool_signature(FIND_USER) == "find_user(name: string) -> Find a user's id from their full name."
    assert tool_signature(WRITE_FILE) == (
        "write_file(path: string, content?: string, append: boolean, mode: string, size: integer) -> Write a file."
    )
    assert tool_signature({"type": "function", "function": {"name": "ping"}}) == "ping()"


def test_tools_are_offered_in_the_system_message_after_the_users_own_system_text() -> None:
    prompt = render_prompt([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}], [FIND_USER])
    system = prompt.split("<|im_end|>")[0]
    assert system.startswith(
        "<|im_start|>system\nBe brief.\n\nYou are a function-calling assistant. You have one tool:"
    )
    assert "find_user(name: string)" in system
    assert '<tool_call>{"name": "TOOL NAME", "arguments": {"ARGUMENT": "VALUE"}}</tool_call>' in system
    assert "requiredTier" not in prompt
    assert "You have these tools:" in tools_instructions([FIND_USER, WRITE_FILE])


def test_one_example_exchange_from_the_first_tool_follows_the_system_message() -> None:
    prompt = render_prompt([{"role": "user", "content": "Find Maria Rossi"}], [FIND_USER, WRITE_FILE])
    turns = prompt.split("<|im_end|>\n")
    assert turns[1] == '<|im_start|>user\nUse the tool find_user with name "abc"'
    assert (
        turns[2] == '<|im_start|>assistant\n<tool_call>{"name": "find_user", "arguments": {"name": "abc"}}</tool_call>'
    )
    assert turns[3] == "<|im_start|>user\nFind Maria Rossi"
    assert turns[4] == "<|im_start|>assistant\n"


def test_example_values_come_from_enum_default_and_type() -> None:
    ask, call = example_exchange(WRITE_FILE)
    assert ask == 'Use the tool write_file with path "abc", append true, mode "text", size 3'
    assert parse_tool_calls(call)[1][0].arguments == {"path": "abc", "append": True, "mode": "text", "size": 3}
    assert example_exchange({"type": "function", "function": {"name": "ping"}}) == (
        "Use the tool ping",
        '<tool_call>{"name": "ping", "arguments": {}}</tool_call>',
    )


def test_earlier_tool_calls_and_results_are_rendered_back() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Find Maria Rossi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_0",
                    "type": "function",
                    "function": {"name": "find_user", "arguments": '{"name": "Maria"}'},
                },
                {"id": "call_1", "type": "function", "function": {"name": "find_user", "arguments": {"name": "Rossi"}}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_0", "content": '{"id": 7}'},
    ]
    prompt = render_prompt(messages, [FIND_USER])
    assert prompt.endswith(
        "<|im_start|>assistant\n"
        '<tool_call>{"name": "find_user", "arguments": {"name": "Maria"}}</tool_call>\n'
        '<tool_call>{"name": "find_user", "arguments": {"name": "Rossi"}}</tool_call><|im_end|>\n'
        '<|im_start|>tool\n{"id": 7}<|im_end|>\n'
        "<|im_start|>assistant\n"
    )


def test_assistant_text_beside_a_call_and_unreadable_arguments_are_kept() -> None:
    message = {
        "role": "assistant",
        "content": "Looking.",
        "tool_calls": [{"id": "x", "function": {"name": "find_user", "arguments": "not json at all"}}],
    }
    prompt = render_prompt([message])
    assert '<|im_start|>assistant\nLooking.\n<tool_call>{"name": "find_user", "arguments": ' in prompt


def test_a_call_rendered_then_parsed_comes_back_the_same() -> None:
    text, calls = parse_tool_calls(render_tool_call("write_file", {"path": "a.txt", "append": True}))
    assert text == ""
    assert [(c.id, c.name, c.arguments) for c in calls] == [("call_0", "write_file", {"path": "a.txt", "append": True})]


# parsing


def test_text_without_calls_is_the_answer() -> None:
    assert parse_tool_calls("  2 + 2 = 4\n") == ("2 + 2 = 4", ())
    assert parse_tool_calls(None) == ("", ())


def test_one_call_becomes_a_tool_call_with_an_openai_style_raw_entry() -> None:
    text, calls = parse_tool_calls(call_text("find_user", {"name": "Maria Rossi"}))
    assert text == ""
    (call,) = calls
    assert (call.id, call.name, call.arguments, call.arguments_problem) == (
        "call_0",
        "find_user",
        {"name": "Maria Rossi"},
        None,
    )
    assert call.raw == {
        "id": "call_0",
        "type": "function",
        "function": {"name": "find_user", "arguments": '{"name": "Maria Rossi"}'},
    }


def test_several_calls_get_ids_in_order() -> None:
    reply = call_text("a", {"x": 1}) + "\n" + call_text("b", {}) + call_text("c", {"y": [1]})
    _, calls = parse_tool_calls(reply)
    assert [(c.id, c.name) for c in calls] == [("call_0", "a"), ("call_1", "b"), ("call_2", "c")]


def test_text_beside_a_call_stays_the_answer() -> None:
    text, calls = parse_tool_calls("Let me look.\n" + call_text("find_user", {"name": "Ann"}) + "\nDone.")
    assert text == "Let me look.\n\nDone."
    assert calls[0].arguments == {"name": "Ann"}


def test_a_call_inside_reasoning_is_not_a_call() -> None:
    reply = "<think>maybe " + call_text("find_user", {"name": "Ann"}) + "</think>No tool needed."
    assert parse_tool_calls(reply) == ("No tool needed.", ())
    _, calls = parse_tool_calls("<think>plan</think>" + call_text("find_user", {"name": "Ann"}))
    assert calls[0].name == "find_user"
    assert parse_tool_calls("<think>" + call_text("find_user", {})) == ("", ())


@pytest.mark.parametrize(
    "reply",
    [
        "<tool_call>not json</tool_call>",
        "<tool_call></tool_call>",
        '<tool_call>{"arguments": {"name": "Ann"}}</tool_call>',
        '<tool_call>{"name": 3, "arguments": {}}</tool_call>',
        '<tool_call>{"name": "", "arguments": {}}</tool_call>',
        '<tool_call>["find_user", {"name": "Ann"}]</tool_call>',
        '<tool_call>{"name": "find_user", "argu',
        '<tool_call>{"id": 42}</tool_call>',
        "<tool_call>",
    ],
)
def test_malformed_call_text_is_not_a_call_and_stays_the_answer(reply: str) -> None:
    assert parse_tool_calls(reply) == (reply.strip(), ())


def test_an_unterminated_call_at_the_end_still_counts() -> None:
    text, calls = parse_tool_calls('Sure. <tool_call>{"name": "find_user", "arguments": {"name": "Ann"}}')
    assert text == "Sure."
    assert calls[0].arguments == {"name": "Ann"}


def test_a_call_cut_short_by_the_next_open_tag_is_read_on_its_own() -> None:
    reply = '<tool_call>{"name": "a", "arguments": {}}<tool_call>{"name": "b", "arguments": {}}</tool_call>'
    assert [c.name for c in parse_tool_calls(reply)[1]] == ["a", "b"]


def test_a_body_that_json_repair_fixes_is_a_call_when_it_has_name_and_arguments() -> None:
    reply = '<tool_call>{"name": "write_file", "arguments": {"path": "server.log", "content": "x"})}</tool_call>'
    text, calls = parse_tool_calls(reply)
    assert text == ""
    assert calls[0].arguments == {"path": "server.log", "content": "x"}


def test_arguments_that_are_not_an_object_make_a_call_with_a_problem() -> None:
    _, calls = parse_tool_calls('<tool_call>{"name": "find_user", "arguments": ["Ann"]}</tool_call>')
    assert calls[0].name == "find_user"
    assert calls[0].arguments == ["Ann"]
    assert (calls[0].arguments_problem or "").startswith("tool arguments are not a JSON object")
    assert calls[0].raw["function"]["arguments"] == '["Ann"]'


def test_arguments_as_a_json_string_are_parsed_and_parameters_is_accepted() -> None:
    _, calls = parse_tool_calls('<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>')
    assert calls[0].arguments == {"a": 1}
    assert calls[0].raw["function"]["arguments"] == '{"a": 1}'
    _, calls = parse_tool_calls('<tool_call>{"name": "f", "parameters": {"b": 2}}</tool_call>')
    assert calls[0].arguments == {"b": 2}
    _, calls = parse_tool_calls('<tool_call>\n{"name": "f"}\n</tool_call>')
    assert calls[0].arguments == {}


@given(st.text())
def test_parsing_arbitrary_text_never_raises(reply: str) -> None:
    text, calls = parse_tool_calls(reply)
    assert isinstance(text, str)
    assert all(call.id == f"call_{i}" for i, call in enumerate(calls))


@given(st.text(alphabet='<>/{}[]":, toolcalnmeargusthik_\n'))
def test_parsing_tag_soup_never_raises(reply: str) -> None:
    parse_tool_calls(reply)
    parse_tool_calls("<tool_call>" + reply)
