"""Several replicas serving one model with no load balancer in front: one backend that spreads requests over them.

Each request goes to the replica with the most free places (its own
concurrency: the endpoint's, else the slots its server reports, else 4) and
waits when every replica is full. A replica whose request fails for good with
a transient error (refused connection, time-out, 5xx after its retries) is
dropped with a note and the request goes to another; the last replica's
failures are the run's. Each level's profile records every replica's share
of the requests and its speed (``replicas``), and the history keeps them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tsuka_core.backends.base import Backend, ChatRequest, ChatResponse, ServerFacts
from tsuka_core.backends.delegating import DelegatingBackend, seen_as
from tsuka_core.backends.http import StatusError
from tsuka_core.engine.serverprep import DEFAULT_CONCURRENCY
from tsuka_core.errors import RequestError
from tsuka_core.terms import Effort

__all__ = ["ReplicaSet", "replica_set"]


@dataclass
class _Replica:
    backend: Backend
    limit: int
    busy: int = 0
    dropped: str | None = None
    served: dict[tuple[str, str | None], list[float]] = field(default_factory=dict)
    """(model, effort) -> [requests, seconds, completion tokens]."""

    def count(self, request: ChatRequest, response: ChatResponse) -> None:
        tally = self.served.setdefault((request.model, request.effort), [0, 0.0, 0])
        tally[0] += 1
        tally[1] += response.duration
        tally[2] += response.completion_tokens


class ReplicaSet(DelegatingBackend):
    """The replicas of one endpoint as one backend: the first one's class facts, efforts and model check.

    What is not about spreading requests (effort parameters, the repeats note,
    which unlisted models the server takes) the delegating base forwards to the
    first replica, so the set is refused or accepted as one server would be.
    """

    def __init__(self, replicas: Sequence[Backend], per_replica: int | None, note: Callable[[str], None]) -> None:
        super().__init__(replicas[0])
        self._replicas = [_Replica(b, per_replica or 0) for b in replicas]
        self._per_replica = per_replica
        self._note = note
        self._free: asyncio.Condition | None = None

    def secrets(self) -> tuple[str, ...]:
        """Every replica's secrets."""
        return tuple(s for r in self._replicas for s in r.backend.secrets())

    @property
    def provider(self) -> str:
        """Every replica's provider, joined by ``+``."""
        return " + ".join(r.backend.provider for r in self._replicas)

    @property
    def slots(self) -> int:
        """Requests in flight over every replica still serving."""
        return sum(r.limit or DEFAULT_CONCURRENCY for r in self._alive())

    def places_note(self) -> str:
        """How many requests go to each replica and in all: ``3 replicas, 2 in flight each (-j 2): 6 in all``."""
        alive = self._alive()
        limits = [r.limit or DEFAULT_CONCURRENCY for r in alive]
        if self._per_replica:
            each = f"{self._per_replica} request(s) in flight each (-j {self._per_replica})"
        else:
            each = f"in flight by their servers' slots ({' + '.join(map(str, limits))}; -j sets one number for each)"
        return f"{len(alive)} replica(s), {each}: {sum(limits)} in all"

    def take_notes(self, model: str | None = None) -> list[str]:
        """Its own notes, then each replica's (a replica that stopped streaming, say), each once."""
        notes = Backend.take_notes(self, model)
        for replica in self._replicas:
            notes += replica.backend.take_notes(model)  # each names its replica's provider itself
        return notes

    def _alive(self) -> list[_Replica]:
        return [r for r in self._replicas if r.dropped is None]

    async def effort_ignored(self, model: str) -> str | None:
        """The first serving replica's answer."""
        return await self._alive()[0].backend.effort_ignored(model)

    async def list_models(self) -> list[str]:
        """The models of the first replica that lists them; one that cannot be reached is dropped."""
        for replica in self._alive():
            try:
                return await replica.backend.list_models()
            except RequestError as exc:
                if not self._drop(replica, exc):
                    raise
        raise RequestError("no replica of the endpoint could be reached")

    async def server_facts(self, model: str) -> ServerFacts:
        """The first replica's facts with ``slots`` the places of every replica (each its own, or its server's)."""
        facts = [await r.backend.server_facts(model) for r in self._alive()]
        for replica, found in zip(self._alive(), facts, strict=True):
            replica.limit = self._per_replica or found.slots or DEFAULT_CONCURRENCY
        return replace(facts[0], slots=self.slots)

    def profile_extra(self, model: str, effort: Effort | None) -> dict[str, Any]:
        """The first replica's facts, and each replica's share of this level's requests and its speed."""
        extra = dict(self._replicas[0].backend.profile_extra(model, effort))
        tallies = [r.served.get((model, effort), [0, 0.0, 0]) for r in self._replicas]
        total = sum(t[0] for t in tallies) or 1
        extra["replicas"] = [
            {
                "provider": r.backend.provider,
                "share": round(t[0] / total, 4),
                "requests": int(t[0]),
                "tokensPerSecond": round(t[2] / t[1], 2) if t[1] > 0 else 0.0,
                **({"dropped": r.dropped} if r.dropped else {}),
            }
            for r, t in zip(self._replicas, tallies, strict=True)
        ]
        return extra

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """The answer of a replica with a free place; a replica that fails transiently is dropped, and another tried."""
        while True:
            replica = await self._take()
            try:
                response = await replica.backend.complete(request)
            except RequestError as exc:
                if not self._drop(replica, exc):
                    raise
                continue
            finally:
                await self._give_back(replica)
            replica.count(request, response)
            return response

    async def _take(self) -> _Replica:
        if self._free is None:
            self._free = asyncio.Condition()
        async with self._free:
            while True:
                alive = self._alive()
                best = max(alive, key=lambda r: (r.limit or DEFAULT_CONCURRENCY) - r.busy)
                if best.busy < (best.limit or DEFAULT_CONCURRENCY):
                    best.busy += 1
                    return best
                await self._free.wait()

    async def _give_back(self, replica: _Replica) -> None:
        replica.busy -= 1
        if self._free is not None:
            async with self._free:
                self._free.notify_all()

    def _drop(self, replica: _Replica, exc: RequestError) -> bool:
        """Drop ``replica`` for a transient failure when another still serves; False when the error is the run's."""
        transient = exc.retryable and not (isinstance(exc, StatusError) and exc.status is not None and exc.status < 500)
        if replica.dropped is not None:
            return len(self._alive()) > 0  # dropped meanwhile by another request: try the others
        if not transient or len(self._alive()) < 2:
            return False
        replica.dropped = str(exc)
        self._note(f"replica {replica.backend.provider} dropped ({exc}); the others finish the run")
        return True

    async def aclose(self) -> None:
        """Close every replica."""
        for replica in self._replicas:
            await replica.backend.aclose()


def replica_set(replicas: Sequence[Backend], per_replica: int | None, note: Callable[[str], None]) -> ReplicaSet:
    """The replicas as one backend whose class answers as the first's (name, model check: what the user chose)."""
    return seen_as(ReplicaSet, type(replicas[0]))(replicas, per_replica, note)
