"""Before a sweep: what the server says about itself and each model, and the concurrency that fits its slots."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence

from tsuka_core.backends.base import Backend, ServerFacts
from tsuka_core.engine.sweep import SweepObserver
from tsuka_core.errors import UsageError

__all__ = ["DEFAULT_CONCURRENCY", "MAX_SLOT_CONCURRENCY", "check_listed", "concurrency_for", "server_facts"]

DEFAULT_CONCURRENCY = 4
"""Requests in flight at once when neither ``-j`` nor the server's slots say otherwise."""
MAX_SLOT_CONCURRENCY = 64
"""The most requests in flight the server's slot count may ask for."""


async def server_facts(backend: Backend, models: Sequence[str], observer: SweepObserver) -> dict[str, ServerFacts]:
    """What the server says about each model; a backend that cannot tell gives no facts, and that is said."""
    facts: dict[str, ServerFacts] = {}
    for model in models:
        try:
            facts[model] = await backend.server_facts(model)
        except Exception as exc:  # a plugin's bug or a server that cannot answer: measure anyway
            observer.note(f"{model}: backend {backend.name!r} could not say what the server is ({exc})")
            facts[model] = ServerFacts()
    return facts


def concurrency_for(explicit: int | None, facts: Mapping[str, ServerFacts]) -> tuple[int, str | None]:
    """Requests in flight: ``-j`` when given, else the server's slots, else the default; with a note when it matters.

    More requests in flight than the server has slots only makes them queue
    there: the answers are the same and the wall time says nothing more.
    """
    slots = max((f.slots for f in facts.values() if f.slots), default=None)
    if explicit is None:
        if slots is None:
            return DEFAULT_CONCURRENCY, None
        chosen = min(slots, MAX_SLOT_CONCURRENCY)
        return chosen, f"the server has {slots} slot(s): {chosen} request(s) in flight (-j sets another number)"
    if slots is not None and explicit > slots:
        return explicit, (
            f"-j {explicit} is more than the server's {slots} slot(s): the extra requests wait at the server "
            "(speed comes from the server's own timings where it reports them)"
        )
    return explicit, None


def check_listed(backend: Backend, wanted: Sequence[str], listed: Sequence[str]) -> None:
    """Refuse a model the server does not list, with the closest listed name; a server listing none is not checked.

    Some servers (llama.cpp) answer with their one model whatever name is sent,
    which would store a profile under a name that was never measured.
    """
    if not listed:
        return
    known = set(listed)
    for model in wanted:
        if model in known:
            continue
        close = difflib.get_close_matches(model, listed, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        shown = ", ".join(listed[:5]) + (", ..." if len(listed) > 5 else "")
        raise UsageError(
            f"model {model!r} is not among the models {backend.provider} lists ({shown}){hint} "
            "('tsuka models' lists them)"
        )
