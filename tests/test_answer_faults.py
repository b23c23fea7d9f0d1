"""Failed answers told apart: a tool call in the text, a wrong tool, bad or missing arguments, a cut, only thinking."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from answerers import PERFECT_TEXT, perfect, which_test
from hypothesis import given
from hypothesis import strategies as st
from imitations import LlamaCppImitation, measure
from loopback import Reply

from tsuka_core.backends.base import ChatResponse
from tsuka_core.engine.answer_faults import IN_TEXT, answer_fault
from tsuka_core.judge.answer import Answer, ToolCall
from tsuka_core.judge.checks import ROLES, check_roles
from tsuka_core.judge.textcalls import text_tool_call
from tsuka_core.plugins.registry import Registry
from tsuka_core.suite.model import Suite

FIND: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "find_customer",
        "parameters": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    },
}


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>\n{"name": "find_customer", "arguments": {"name": "Daniel Hughes"}}\n</tool_call>',
        '[TOOL_CALLS][{"name": "find_customer", "arguments": {"name": "Daniel Hughes"}}]',
        '[TOOL_CALLS]find_customer[ARGS]{"name": "Daniel Hughes"}',
        '{"name": "find_customer", "arguments": {"name": "Daniel Hughes"}}',
        '```json\n{"name": "find_customer", "parameters": {"name": "Daniel Hughes"}}\n```',
        '<function=find_customer>{"name": "Daniel Hughes"}</function>',
    ],
)
def test_a_tool_call_written_as_text_is_found_and_named(text: str) -> None:
    assert text_tool_call(text) == "find_customer"


@pytest.mark.parametrize(
    "text",
    ["The customer is Daniel Hughes.", '{"name": "Daniel", "age": 4}', 'Here: {"name": "x", "arguments": {}} ok', ""],
)
def test_prose_and_plain_json_are_no_tool_call(text: str) -> None:
    assert text_tool_call(text) is None


@given(st.text(max_size=300))
def test_arbitrary_text_never_breaks_the_search(text: str) -> None:
    found = text_tool_call(text)
    assert found is None or isinstance(found, str)


def call(name: str, arguments: Any, problem: str | None = None) -> ToolCall:
    return ToolCall("call_0", name, arguments, problem)


@pytest.mark.parametrize(
    ("response", "kind", "said"),
    [
        (ChatResponse(text='<tool_call>{"name": "find_customer", "arguments": {}}'), "in_text", IN_TEXT),
        (ChatResponse(text="", tool_calls=(call("delete_all", {}),)), "wrong_tool", "wrong tool: called delete_all"),
        (ChatResponse(text="", tool_calls=(call("find_customer", None, "not JSON"),)), "invalid_arguments", "JSON"),
        (ChatResponse(text="", tool_calls=(call("find_customer", {}),)), "missing_argument", "argument(s): name"),
        (ChatResponse(text="The", finish_reason="length", completion_tokens=99), "cut", "finish_reason: length"),
        (
            ChatResponse(text="", reasoning="hmm", finish_reason="length", completion_tokens=64),
            "thinking_only",
            "no answer after 64 reasoning tokens",
        ),
        (
            ChatResponse(text="", content="<think>hmm, and then", finish_reason="length", completion_tokens=32),
            "thinking_only",
            "no answer after 32 reasoning tokens",
        ),
    ],
)
def test_each_kind_is_named(response: ChatResponse, kind: str, said: str) -> None:
    found = answer_fault(response, [FIND], "find_customer")
    assert found is not None
    assert found[0] == kind
    assert said in found[1]


def roles_of(registry: Registry, failed: set[str]) -> set[str]:
    """The roles the built-in check types called ``failed`` declare: what the engine reads from their failure."""
    found = [registry.check_type(name) for name in failed]
    return {role for cls in found if cls is not None for role in check_roles(cls)}


@pytest.mark.parametrize(
    ("response", "failed", "kind", "said"),
    [
        (
            ChatResponse(text="I cannot help."),
            {"tool_called"},
            "abstained",
            "abstained: answered without calling find_customer",
        ),
        (
            ChatResponse(text="", tool_calls=(call("find_customer", {"name": "D"}),)),
            {"tool_not_called"},
            "call_count",
            "called find_customer where no call was wanted",
        ),
        (
            ChatResponse(text="", tool_calls=(call("find_customer", {"name": "D"}),) * 3),
            {"tool_calls_count"},
            "call_count",
            "3 tool call(s)",
        ),
        (
            ChatResponse(text="", tool_calls=(call("find_customer", {"name": "D"}),)),
            {"tool_arg_equals"},
            "wrong_arguments",
            "wrong arguments: find_customer",
        ),
        (
            ChatResponse(
                text="", tool_calls=(call("find_customer", {"name": "D"}), call("find_customer", None, "not JSON"))
            ),
            {"tool_arg_at"},
            "invalid_arguments",
            "arguments of find_customer cannot be used",
        ),
        (
            ChatResponse(text="", reasoning_tokens=900, completion_tokens=900, finish_reason="stop"),
            set(),
            "thinking_only",
            "no answer after 900 reasoning tokens",
        ),
    ],
)
def test_each_kind_of_a_failed_tool_step_is_named(
    response: ChatResponse, failed: set[str], kind: str, said: str, registry: Registry
) -> None:
    found = answer_fault(response, [FIND], "find_customer", roles_of(registry, failed))
    assert found is not None
    assert found == (kind, found[1])
    assert said in found[1]


def test_a_right_call_and_a_plain_text_answer_have_no_fault() -> None:
    right = ChatResponse(text="", tool_calls=(call("find_customer", {"name": "D"}),))
    assert answer_fault(right, [FIND], "find_customer") is None
    assert answer_fault(ChatResponse(text="no idea"), [FIND], "find_customer") is None
    assert answer_fault(ChatResponse(text='{"name": "x", "arguments": {}}'), [], None) is None


def in_text(body: dict[str, Any], n: int) -> Reply:
    """Right answers, except that tool calls come back as ``<tool_call>`` text, as a template without tools gives."""
    reply = perfect(body, n)
    if not reply.tool_calls:
        return reply
    name, arguments = reply.tool_calls[0]
    return Reply.text(f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>")


def test_a_sweep_counts_tool_calls_in_text_and_says_so_in_the_details(
    tmp_path: Path, suite: Suite, registry: Registry
) -> None:
    with LlamaCppImitation(in_text, rate=5000.0, tokens=10) as server:
        report, _, profiles = measure(server, tmp_path / "p.json", suite, registry, 1)

    profile = profiles["smollm2@none"]
    tool_tests = [t for t in suite.tests if t.tools and any(c.type == "tool_called" for s in t.steps for c in s.checks)]
    assert profile["toolCallsInText"] == len(tool_tests) == profile["answerFaults"]["toolCallsInText"]
    details = [
        c.outcome.detail
        for level in report.sweeps[0].levels
        for t in level.tests
        for s in t.steps
        for c in s.checks
        if c.outcome.status == "failed" and s.sent
    ]
    assert any(d.startswith(f"{IN_TEXT} (find_customer)") for d in details), details
    assert profile["scores"]["toolCalling"] < 100


def cut_json(body: dict[str, Any], n: int) -> Reply:
    """The JSON tests cut half-way at the token limit; everything else right."""
    name, _ = which_test(body)
    if name.startswith("json_"):
        return Reply(content=PERFECT_TEXT[name][:20], usage=(12, 7))
    return perfect(body, n)


def test_an_answer_cut_at_the_limit_is_counted_and_said(tmp_path: Path, suite: Suite, registry: Registry) -> None:
    def json_test(body: dict[str, Any]) -> bool:
        return which_test(body)[0].startswith("json_")

    with LlamaCppImitation(cut_json, rate=5000.0, tokens=10, cut=json_test) as server:
        report, _, profiles = measure(server, tmp_path / "p.json", suite, registry, 1)

    assert profiles["smollm2@none"]["answerFaults"] == {"cutAtLimit": 2}
    details = [c.outcome.detail for t in report.sweeps[0].levels[0].tests for s in t.steps for c in s.checks]
    cut = [d for d in details if d.startswith("answer cut at")]
    assert cut, details
    assert all(
        "the server's context size, not max_tokens" in d and "10 answer tokens, max_tokens 2048" in d for d in cut
    )


def wrong_first_tool(body: dict[str, Any], n: int) -> Reply:
    """Right answers, except that the first tool call of a test names the first tool offered instead."""
    reply = perfect(body, n)
    tools = body.get("tools") or []
    if not reply.tool_calls or len(tools) < 2:
        return reply
    name, arguments = reply.tool_calls[0]
    offered = [t["function"]["name"] for t in tools]
    other = next(o for o in offered if o != name)
    return Reply.tool_call(other, arguments)


def test_a_wrong_tool_is_said_once_in_the_detail(tmp_path: Path, suite: Suite, registry: Registry) -> None:
    with LlamaCppImitation(wrong_first_tool, rate=5000.0, tokens=10) as server:
        report, _, _ = measure(server, tmp_path / "p.json", suite, registry, 1)

    details = [
        c.outcome.detail
        for level in report.sweeps[0].levels
        for t in level.tests
        for s in t.steps
        for c in s.checks
        if c.type == "tool_called" and c.outcome.status == "failed"
    ]
    assert details
    for detail in details:
        assert detail.startswith("wrong tool: called "), detail
        assert detail.count("called ") == 1, detail


@pytest.mark.parametrize(
    ("text", "banned"),
    [
        ('<tool_call>\n{"name": "send_email", "arguments": {"to": "a@b.c"}}\n</tool_call>', None),
        ('<tool_call>\n{"name": "send_email", "arguments": {"to": "a@b.c"', "send_email"),
        ("<tool_call>\nnot even JSON", "send_email"),
    ],
)
def test_an_abstention_is_never_credited_to_a_call_the_server_did_not_decode(
    registry: Registry, text: str, banned: str | None
) -> None:
    check_type = registry.check_type("tool_not_called")
    assert check_type is not None
    check = check_type(check_type.params_model.model_validate({"value": banned} if banned else {}))
    outcome = check.evaluate(Answer(text, (), [FIND]))
    assert outcome.status == "failed"
    assert "written in the answer text" in outcome.detail
    assert check.evaluate(Answer("The send_email tool sends mail.", (), [FIND])).passed


def test_an_abstention_is_never_credited_to_a_malformed_call(registry: Registry) -> None:
    malformed = ChatResponse(text="", tool_calls=(call("send_email", None, "tool arguments are not JSON"),))
    check_type = registry.check_type("tool_not_called")
    assert check_type is not None
    judged = check_type(check_type.params_model.model_validate({})).evaluate(Answer("", malformed.tool_calls, [FIND]))
    assert judged.status == "failed"
    assert answer_fault(malformed, [FIND], None, roles_of(registry, {"tool_not_called"})) == (
        "call_count",
        "called send_email where no call was wanted",
    )


def test_every_built_in_tool_check_declares_its_roles_and_an_undeclared_plugin_keeps_0_2s_reading(
    registry: Registry,
) -> None:
    from tsuka_core import CheckType

    tool_types = {name: cls for name, cls in registry.check_types.items() if name.startswith("tool")}
    assert tool_types
    for name, cls in tool_types.items():
        if cls.__module__.startswith("tsuka_checks_builtin"):
            assert cls.roles is not None, name
            assert set(cls.roles) <= set(ROLES), name

    class OldArgs(CheckType):  # type: ignore[type-arg]
        name = "tool_args_old"

    class OldText(CheckType):  # type: ignore[type-arg]
        name = "contains_old"

    assert check_roles(OldArgs) == {"judges_arguments"}
    assert check_roles(OldText) == frozenset()
