"""One of BFCL's multi-turn entries as a tsuka multi-turn test, judged as BFCL's multi-turn checker judges it.

The test names the ``bfcl`` tool environment with the entry's classes and
initial configuration, and offers the functions of those classes as BFCL's
function-calling handler does (with the Python hint; a function the entry holds
back until a turn is revealed in that turn, without it, and that turn asks
BFCL's "I have updated some more functions..."). Each turn states BFCL's
ground-truth calls as its reference; a turn whose ground truth is not empty
checks what BFCL's checker checks after it: the model made a call in it
(``tool_calls_count``), its environment is in the reference's state
(``state_matches``), and every result of the turn's reference calls is among
the results the model's calls got so far (``results_include``). The test passes
when every check of every turn does, as BFCL's entry is valid when every turn is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tsuka_checks_builtin.bfcl.categories import Category
from tsuka_checks_builtin.bfcl.environment import reference_call
from tsuka_checks_builtin.bfcl.tools import tool_of

__all__ = ["REVEAL_PROMPT", "multi_turn_test"]

REVEAL_PROMPT = "I have updated some more functions you can choose from. What about now?"
"""What BFCL asks in a turn that reveals functions (``DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC``)."""

_DOCS = {
    "GorillaFileSystem": "gorilla_file_system.json", "MathAPI": "math_api.json", "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json", "TicketAPI": "ticket_api.json", "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json", "VehicleControlAPI": "vehicle_control.json",
}  # fmt: skip
"""Where bfcl-eval keeps each class's function descriptions (``data/multi_turn_func_doc``)."""

_TURN_CHECKS = (
    {"type": "tool_calls_count", "value": 1, "mode": "at_least"},
    {"type": "state_matches"},
    {"type": "results_include"},
)


def _functions(data: Path, classes: list[str]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for name in classes:
        with (data / "multi_turn_func_doc" / _DOCS[name]).open(encoding="utf-8") as lines:
            found += [json.loads(line) for line in lines if line.strip()]
    return found


def multi_turn_test(
    data: Path, category: Category, entry: Mapping[str, Any], answer: Mapping[str, Any] | None
) -> dict[str, Any]:
    """One multi-turn entry (with its ground truth) as a tsuka test file."""
    classes = list(entry["involved_classes"])
    functions = _functions(data, classes)
    held: dict[int, list[dict[str, Any]]] = {}
    for at, names in (entry.get("missed_function") or {}).items():
        for name in names:
            found = next((f for f in functions if f["name"] == name), None)
            if found is not None:
                functions.remove(found)
                held.setdefault(int(at), []).append(found)
    truth = list(answer["ground_truth"]) if answer else [[] for _ in entry["question"]]
    turns = []
    for index, messages in enumerate(entry["question"]):
        calls = [reference_call(classes, call) for call in truth[index]] if index < len(truth) else []
        turn: dict[str, Any] = {"prompt": REVEAL_PROMPT if index in held else _prompt(messages)}
        if index in held:
            turn["reveal"] = [tool_of(f, "python", hint=False) for f in held[index]]
        turn["reference"] = [{"name": name, "arguments": arguments} for name, arguments in calls]
        turn["checks"] = [dict(check) for check in _TURN_CHECKS] if calls else []
        turns.append(turn)
    config = {"classes": classes, "initial_config": entry.get("initial_config", {}),
              "long_context": "long_context" in category.name}  # fmt: skip
    return {
        "name": entry["id"],
        "description": f"BFCL {category.name} {entry['id']}: {len(turns)} turns in {', '.join(classes)}",
        "category": "toolCalling",
        "environment": {"type": "bfcl", "config": config},
        "tools": [tool_of(f, "python") for f in functions],
        "turns": turns,
    }


def _prompt(messages: list[Mapping[str, Any]]) -> str:
    users = [m["content"] for m in messages if m.get("role") == "user"]
    if len(users) != 1 or len(messages) != 1:
        raise ValueError(f"a turn of {len(messages)} messages; tsuka's turns hold one user message")
    return str(users[0])
