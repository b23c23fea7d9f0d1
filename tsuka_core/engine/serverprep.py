"""Before a sweep: which models to measure, what the server says about each, and the concurrency that fits."""

from __future__ import annotations

import difflib
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tsuka_core.backends.base import Backend, ServerFacts
from tsuka_core.backends.masked_answers import masked_facts
from tsuka_core.engine.sweep import SweepObserver
from tsuka_core.engine.taskgroups import all_or_none
from tsuka_core.errors import BackendError, RequestError, UsageError
from tsuka_core.masking import holds_secret

__all__ = [
    "DEFAULT_CONCURRENCY",
    "MAX_SLOT_CONCURRENCY",
    "Prepared",
    "check_listed",
    "concurrency_for",
    "prepare",
    "resolve_models",
    "server_facts",
]

DEFAULT_CONCURRENCY = 4
"""Requests in flight at once when neither ``-j`` nor the server's slots say otherwise."""
MAX_SLOT_CONCURRENCY = 64
"""The most requests in flight the server's slot count may ask for."""


@dataclass(frozen=True)
class Prepared:
    """The models a run measures, what the server said about each, and which of them the backend listed."""

    models: list[str]
    facts: dict[str, ServerFacts]
    listed: frozenset[str]
    """Models the backend's own list named: the server knows them, so their first request need not go alone."""


async def prepare(
    backend: Backend, requested: Sequence[str], observer: SweepObserver, *, model_check: bool = True
) -> Prepared:
    """Resolve ``requested`` and ask ``backend`` for the server's facts, both at once when the names are given.

    With ``all`` the names come from the model list, so the facts are asked
    after it. A refused name cancels the facts still being asked.
    ``model_check`` False measures names the server does not list (a gateway).
    """
    wanted = [m for m in requested if m != "all"]
    if not wanted or len(wanted) != len(requested):
        models, listed = await resolve_models(backend, requested, model_check=model_check)
        return Prepared(models, await server_facts(backend, models, observer), listed)
    both: list[Coroutine[Any, Any, Any]] = [
        server_facts(backend, list(dict.fromkeys(wanted)), observer),
        resolve_models(backend, requested, model_check=model_check),
    ]
    facts, (models, listed) = await all_or_none(both)  # a refused name cancels the facts still being asked
    return Prepared(models, facts, listed)


async def resolve_models(
    backend: Backend, requested: Sequence[str], *, model_check: bool = True
) -> tuple[list[str], frozenset[str]]:
    """The models to measure (``all``: every model listed, then the names given) and those the list named.

    The names given are checked against the list of a backend that lists
    every model (:func:`check_listed`) unless ``model_check`` is False;
    without ``all``, a list that cannot be read leaves them to the first
    request (unchecked names too: each model's first request then goes alone).
    """
    wanted = [m for m in requested if m != "all"]
    lists_all = backend.lists_every_model and model_check
    checked = [m for m in wanted if not backend.takes_unlisted(m)] if lists_all else []
    if wanted and len(wanted) == len(requested):
        listed: list[str] = []
        if checked:
            try:
                listed = await backend.list_models()
            except RequestError:
                listed = []  # a server without a model list: the first request tells
            check_listed(backend, checked, listed)
        return list(dict.fromkeys(wanted)), frozenset(listed).intersection(wanted)
    found = without_secrets(backend, await backend.list_models())
    if not found:
        raise BackendError(f"backend {backend.name!r} at {backend.provider} lists no models")
    check_listed(backend, checked, found)
    return list(dict.fromkeys([*found, *wanted])), frozenset(found)


def without_secrets(backend: Backend, listed: Sequence[str]) -> list[str]:
    """The listed model names, less any that holds a secret the run sends (it would be stored and shown)."""
    secrets = backend.secrets()
    kept = [name for name in listed if not holds_secret(name, secrets)]
    if len(kept) < len(listed):
        backend.add_note(
            f"{len(listed) - len(kept)} model name(s) the server lists hold a secret the run sends; left out"
        )
    return kept


async def server_facts(backend: Backend, models: Sequence[str], observer: SweepObserver) -> dict[str, ServerFacts]:
    """What the server says about each model; a backend that cannot tell gives no facts, and that is said."""
    facts: dict[str, ServerFacts] = {}
    for model in models:
        try:
            facts[model] = masked_facts(await backend.server_facts(model), backend.secrets())
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
        lister = f"backend {backend.name!r}" if backend.provider == backend.name else backend.provider
        raise UsageError(
            f"model {model!r} is not among the models {lister} lists ({shown}){hint} ('tsuka models' lists them; "
            "a gateway that serves models it does not list: --no-model-check, or model_check = false)"
        )
