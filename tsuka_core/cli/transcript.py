"""A recorded test as ``tsuka show`` prints it: each step's messages, answer and checks."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from rich.text import Text

from tsuka_core.engine.answer_faults import fault_label
from tsuka_core.textsafe import one_line

if TYPE_CHECKING:
    from rich.text import Text

    from tsuka_core.judge.answer import ToolCall
    from tsuka_core.storage.history_query import StoredStep, StoredTest

__all__ = ["call_lines", "check_lines", "transcript"]


def call_lines(call: ToolCall) -> Iterable[Text]:
    """A tool call as the model wrote it; when its arguments were not JSON, what was made of them beside it."""

    raw = call.raw_arguments
    if raw is None or (not call.repaired and call.arguments_problem is None):
        yield Text(f"→ {one_line(call.name)}({json.dumps(call.arguments, ensure_ascii=False)})")
        return
    yield Text(f"→ {one_line(call.name)}({one_line(raw)})")
    if call.repaired:
        yield Text(f"  repaired: {json.dumps(call.arguments, ensure_ascii=False)}", style="yellow")
    else:
        yield Text(f"  {one_line(call.arguments_problem or '')}", style="red")


def check_lines(step: StoredStep, *, every_check: bool, indent: str, prefix: str = "") -> Iterable[Text]:
    """A line per check of ``step`` (only those that did not pass, unless ``every_check``), marked by outcome."""

    marks = {"passed": ("✓", "green"), "failed": ("x", "red"), "errored": ("!", "magenta")}
    for check in step.checks:
        if check.status == "passed" and not every_check:
            continue
        mark, style = marks.get(check.status, ("?", ""))
        yield Text(f"{indent}{mark} {prefix}{check.location} {check.type}: {one_line(check.detail)}", style=style)


def _turns(test: StoredTest) -> bool:
    return any(c.location.startswith("turns[") for s in test.steps for c in s.checks)


def _assistant_lines(message: dict[str, Any]) -> Iterable[Text]:
    yield Text("assistant:", style="cyan")
    if message.get("content"):
        yield Text(str(message["content"]))
    for raw in message.get("tool_calls") or ():
        function = raw.get("function") if isinstance(raw, dict) else None
        if isinstance(function, dict):
            yield Text(f"→ {one_line(str(function.get('name')))}({one_line(str(function.get('arguments')))})")


def requests_sent(test: StoredTest) -> Iterable[Text | str]:
    """Each sent step's request as recorded, as JSON: the messages and the tools offered, as the backend got them;
    then, where the backend knows it (the embedded model), the prompt text its chat template rendered."""
    for step in test.steps:
        if not step.sent:
            continue
        yield Text(f"── request of step {step.index}", style="bold")
        body = {"messages": list(step.messages), "tools": list(test.tools)}
        yield json.dumps(body, ensure_ascii=False, indent=2, default=str)  # printed soft-wrapped: it stays JSON
        prompt = step.response.rendered_prompt if step.response is not None else None
        if prompt is not None:
            heading = f"── prompt of step {step.index} as the model read it (rendered by its chat template)"
            yield Text(heading, style="bold")
            yield prompt
    yield ""


def transcript(test: StoredTest) -> Iterable[Text | str]:
    """Each step (each turn, of a multi-turn test) of a recorded test: the messages sent (a turn's calls and their
    results among them), the reasoning and answer, its failure kind, every check."""

    seen = 0
    unit = "turn" if _turns(test) else "step"
    if test.tools:
        names = [str((t.get("function") or t).get("name")) for t in test.tools if isinstance(t, Mapping)]
        yield Text(f"tools offered: {one_line(', '.join(names))}", style="dim")
    for step in test.steps:
        yield Text(f"── {unit} {step.index}" + ("" if step.sent else " (not sent)"), style="bold")
        asked = False
        for message in list(step.messages)[seen:]:
            role = message.get("role")
            if role == "assistant":
                if asked:  # a step of this turn: its calls, whose results follow
                    yield from _assistant_lines(dict(message))
                continue  # before this step's prompt: the answer before, shown already
            asked = asked or role == "user"
            label = str(role)
            if message.get("tool_call_id"):
                label += f" (call {message['tool_call_id']})"
            yield Text(f"{label}:", style="cyan")
            yield Text(str(message.get("content") or ""))
        seen = len(step.messages)
        if step.response is not None:
            response = step.response
            if response.reasoning:
                yield Text("reasoning:", style="dim")
                yield Text(response.reasoning, style="dim italic")
            yield Text("answer:" + (" (from the cache)" if step.cached else ""), style="green")
            if response.text:
                yield Text(response.text)
            for call in response.tool_calls:
                yield from call_lines(call)
            yield Text(f"{response.completion_tokens} completion tokens in {response.duration:.2f} s", style="dim")
        elif step.sent or step.messages:
            yield Text("no answer: the request failed", style="red")
        if kind := fault_label(step.fault):
            yield Text(f"failure kind: {kind}", style="yellow")
        yield "checks:"
        yield from check_lines(step, every_check=True, indent="  ")
        yield ""
