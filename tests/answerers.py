"""Scripted answerers for the default suite, as loopback-server handlers: perfect, fooled, tool-shy."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from loopback import Reply

DEFAULT_TESTS = (
    "frase_8_parole",
    "lista_vincoli_negativi",
    "json_prodotti",
    "json_annidato",
    "catena_tool_distrattori",
    "trappola_astensione",
    "tool_write_append",
)
"""The default suite's tests, in suite order."""

PERFECT_TEXT = {
    "frase_8_parole": "Every morning the fisherman walks beside the river.",
    "lista_vincoli_negativi": "iron\ncopper\nsilver",
    "json_prodotti": json.dumps(
        {
            "cheapest": [{"name": "spoon", "price": 3}, {"name": "mug", "price": 6}, {"name": "tray", "price": 9}],
            "total_cost": 73,
        }
    ),
    "json_annidato": json.dumps(
        {
            "host": "reports.example.net",
            "port": 9443,
            "ssl": False,
            "endpoints": [
                {"path": "/status", "method": "GET", "requires_auth": False},
                {"path": "/exports", "method": "DELETE", "requires_auth": True},
            ],
        }
    ),
    "trappola_astensione": "The send_email tool sends an email message to a recipient.",
}


def _last(body: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = body["messages"][-1]
    return message


def _tool_names(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools") or []}


def which_test(body: dict[str, Any]) -> tuple[str, int]:
    """The default-suite test a request belongs to, and its step index."""
    tools, last = _tool_names(body), _last(body)
    text = str(last.get("content") or "")
    step = sum(1 for m in body["messages"] if m["role"] == "tool")
    if "find_customer" in tools:
        return "catena_tool_distrattori", step
    if "send_email" in tools:
        return "trappola_astensione", 0
    if "write_file" in tools:
        return "tool_write_append", step
    if "8 words" in text:
        return "frase_8_parole", 0
    if "metals" in text:
        return "lista_vincoli_negativi", 0
    if "kitchen items" in text:
        return "json_prodotti", 0
    return "json_annidato", 0


def perfect(body: dict[str, Any], n: int, *, customer_id: str = "CUS-5062") -> Reply:
    """Answer every default-suite request right."""
    del n
    name, step = which_test(body)
    if name == "catena_tool_distrattori":
        if step == 0:
            return Reply.tool_call("find_customer", {"name": "Daniel Hughes"})
        return Reply.tool_call("get_invoices", {"customer_id": customer_id})
    if name == "tool_write_append":
        if step == 0:
            return Reply.tool_call("write_file", {"path": "deploy.log", "content": "[START] Deployment started"})
        return Reply.tool_call(
            "write_file", {"path": "deploy.log", "content": "[DONE] Release 2.4 published", "append": True}
        )
    return Reply.text(PERFECT_TEXT[name])


def fooled(body: dict[str, Any], n: int) -> Reply:
    """Right everywhere but passes the distractor's id on."""
    return perfect(body, n, customer_id="CUS-3318")


def tool_shy(body: dict[str, Any], n: int) -> Reply:
    """Right with text, but never calls a tool."""
    name, _step = which_test(body)
    return Reply.text(PERFECT_TEXT.get(name, "I would rather not use tools."))


EFFORT_REFUSAL = "Unrecognized request argument supplied: reasoning_effort"
"""What OpenAI-style servers answer (400) to a parameter they do not know."""

Answerer = Callable[[dict[str, Any], int], Reply]


def by_effort(answerers: Mapping[str, Answerer]) -> Answerer:
    """Answer like ``answerers[reasoning_effort]`` (key ``none`` when the request carries no effort)."""

    def answer(body: dict[str, Any], n: int) -> Reply:
        return answerers[str(body.get("reasoning_effort", "none"))](body, n)

    return answer


def by_model(answerers: Mapping[str, Answerer]) -> Answerer:
    """Answer like ``answerers[model]``."""

    def answer(body: dict[str, Any], n: int) -> Reply:
        return answerers[str(body["model"])](body, n)

    return answer


def refusing_effort(body: dict[str, Any], n: int) -> Reply:
    """Refuse every request that carries ``reasoning_effort`` (400); answer the others right."""
    if "reasoning_effort" in body:
        return Reply.error(400, EFFORT_REFUSAL)
    return perfect(body, n)


def throttled(answerer: Answerer, every: int = 3) -> Answerer:
    """Answer 429 with ``Retry-After: 0`` once to every ``every``-th distinct request, like ``answerer`` otherwise.

    A request is throttled on its first attempt only, so its retry succeeds however the concurrent
    requests of a run interleave: which requests are throttled depends on arrival order, how many does not.
    """
    seen: dict[str, int] = {}

    def answer(body: dict[str, Any], n: int) -> Reply:
        key = json.dumps(body, sort_keys=True)
        if key not in seen:
            seen[key] = len(seen)
            if seen[key] % every == every - 1:
                return Reply.error(429, "rate limit reached, slow down", retry_after=0)
        return answerer(body, n)

    return answer


def failing(status: int = 500, message: str = "the model crashed") -> Answerer:
    """Answer every request with the same error."""

    def answer(body: dict[str, Any], n: int) -> Reply:
        del body, n
        return Reply.error(status, message)

    return answer
