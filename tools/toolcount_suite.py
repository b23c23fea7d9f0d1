"""Write the `toolcount` suite: four tool tasks, each offered with 1, 4, 8, 16, 32 and 64 tools.

The distractors are the other tools of one business API (verbs x records:
get_invoice, update_invoice, get_order...), the nearest first: the same
record, then the same verb, then the rest. Their order in a test is a fixed
shuffle in which the right tool is never first, so "always call the first
tool" fails every test with more than one tool. Usage:

    python tools/toolcount_suite.py tsuka_checks_builtin/suites/toolcount

tests/test_toolcount_suite.py checks that the committed files are this script's output.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

COUNTS = (1, 4, 8, 16, 32, 64)
"""How many tools each task is offered with."""

VERBS = {
    "get": "Return one {noun} by its id, with every field.",
    "update": "Change fields of an existing {noun} by its id.",
    "delete": "Delete a {noun} by its id; it cannot be undone.",
    "archive": "Archive a {noun} by its id: it is kept but hidden from lists.",
    "export": "Export a {noun} by its id as a PDF document.",
    "create": "Create a new {noun} with a title.",
    "search": "Search {noun}s by free text and return the matches.",
    "list": "List the most recent {noun}s, newest first.",
}
NOUNS = ("invoice", "customer", "order", "ticket", "shipment", "refund", "product", "contract")

TASKS: tuple[tuple[str, str, str, str, str], ...] = (
    ("invoice_lookup", "Show me the details of invoice INV-2041.", "get_invoice", "invoice_id", "INV-2041"),
    (
        "ticket_open",
        'Open a new support ticket titled "Printer jam on floor 3".',
        "create_ticket",
        "title",
        "Printer jam on floor 3",
    ),
    ("contract_archive", "Contract CTR-118 has expired; archive it.", "archive_contract", "contract_id", "CTR-118"),
    ("shipment_search", "Find the shipments that mention Rotterdam.", "search_shipment", "query", "Rotterdam"),
)
"""name, prompt, the right tool, its argument and the argument's value."""


def argument(verb: str, noun: str) -> str:
    """The one required argument of ``verb_noun``."""
    return "title" if verb == "create" else "query" if verb in ("search", "list") else f"{noun}_id"


def tool(name: str) -> dict[str, Any]:
    """The OpenAI tool schema of ``verb_noun``."""
    verb, noun = name.split("_", 1)
    arg = argument(verb, noun)
    kind = "Free text to search for" if arg == "query" else "Title" if arg == "title" else f"Id of the {noun}"
    parameters = {"type": "object", "properties": {arg: {"type": "string", "description": kind}}, "required": [arg]}
    return {
        "type": "function",
        "function": {"name": name, "description": VERBS[verb].format(noun=noun), "parameters": parameters},
    }


def offered(right: str, count: int, seed: str) -> list[dict[str, Any]]:
    """``count`` tools: ``right`` and its nearest relatives, shuffled with ``right`` never first (count > 1)."""
    verb, noun = right.split("_", 1)
    others = [f"{v}_{n}" for n in NOUNS for v in VERBS if f"{v}_{n}" != right]
    others.sort(key=lambda name: (name.split("_", 1)[1] != noun, name.split("_", 1)[0] != verb))
    names = [right, *others[: count - 1]]
    random.Random(f"{seed}/{count}").shuffle(names)
    if count > 1 and names[0] == right:
        names[0], names[1] = names[1], names[0]
    return [tool(name) for name in names]


def test_file(index: int, task: tuple[str, str, str, str, str], count: int) -> tuple[str, dict[str, Any]]:
    """The file name and content of one task at one tool count."""
    name, prompt, right, arg, value = task
    test = {
        "name": f"{name}_{count}_tools",
        "description": f"The right tool among {count} tool(s) of one API",
        "category": "toolCalling",
        "tools": offered(right, count, name),
        "prompt": prompt,
        "checks": [
            {"type": "tool_called", "value": right, "weight": 2},
            {"type": "tool_arg_equals", "arg": arg, "value": value},
            {"type": "tool_calls_count", "value": 1},
        ],
    }
    return f"{index}{COUNTS.index(count)}_{name}_{count:02d}.json", test


def files() -> dict[str, str]:
    """Every file of the suite by name, as written."""
    found = {}
    for index, task in enumerate(TASKS, start=1):
        for count in COUNTS:
            file, test = test_file(index, task, count)
            found[file] = json.dumps(test, indent=2, ensure_ascii=False) + "\n"
    return found


def main(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files().items():
        (folder / name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
