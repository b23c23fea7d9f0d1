"""A budget of memory for large answers: how many may be read and judged at once, whatever the concurrency.

An answer may be up to :data:`~tsuka_core.backends.http.MAX_BODY_BYTES` long,
and reading, decoding, parsing and judging it holds several copies at once;
at ``-j 16`` sixteen such answers would take gigabytes. A body that grows
past :data:`LARGE_BODY_BYTES` while it is read takes one of the budget's
places and keeps it until whoever opened the scope (the runner, around one
request and the judging of its answer) leaves it; the next large body waits
for a place. Small answers never wait. Outside a scope nothing is limited.

The scope is found through a context variable, so a backend plugin that reads
bodies with :func:`~tsuka_core.backends.http.request_json` is budgeted too.
"""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["LARGE_BODY_BUDGET", "LARGE_BODY_BYTES", "BodyBudget", "take_large_place"]

LARGE_BODY_BYTES = 1024 * 1024
"""A body larger than this takes a place of the budget while it is read and judged."""
LARGE_BODY_BUDGET = 64 * 1024 * 1024
"""Bytes of large answers in flight at once: this over the largest answer read gives the number of places."""


class BodyBudget:
    """Places for large answers: ``places`` of them may be read and judged at once."""

    def __init__(self, places: int) -> None:
        import asyncio  # not at import: 'tsuka validate' never loads the event loop

        self.places = max(1, places)
        self._free = asyncio.Semaphore(self.places)

    async def take(self) -> None:
        """Wait for a free place and take it."""
        await self._free.acquire()

    def give_back(self) -> None:
        """Free a place taken with :meth:`take`."""
        self._free.release()

    @classmethod
    def for_bodies(cls, max_body: int, budget: int = LARGE_BODY_BUDGET) -> BodyBudget:
        """The budget for answers of at most ``max_body`` bytes (one place at least)."""
        return cls(budget // max(max_body, 1))

    @asynccontextmanager
    async def scope(self) -> AsyncIterator[None]:
        """A request and the judging of its answer: a place taken by a large body in it is given back on leaving."""
        held = _Held(self)
        token = _current.set(held)
        try:
            yield
        finally:
            _current.reset(token)
            held.release()


class _Held:
    """The place one scope holds, if any."""

    def __init__(self, budget: BodyBudget) -> None:
        self.budget = budget
        self.holding = False

    async def take(self) -> None:
        if not self.holding:
            await self.budget.take()
            self.holding = True

    def release(self) -> None:
        if self.holding:
            self.holding = False
            self.budget.give_back()


_current: contextvars.ContextVar[_Held | None] = contextvars.ContextVar("tsuka_body_budget", default=None)


async def take_large_place() -> None:
    """Wait for a place of the current scope's budget (once per scope); no scope, no wait."""
    held = _current.get()
    if held is not None:
        await held.take()
