"""The run's HTTP client: stock httpx clients of a few connections each, behind one client that hands out requests.

httpcore's pool looks at every connection it holds each time a request
starts or ends (and, as of httpcore 1.0.9, closes any idle connection once it
holds more connections than it may keep idle), so one pool as large as the
concurrency costs every request in proportion to its size. Here each member
is an ordinary ``httpx.AsyncClient`` that keeps :data:`MEMBER_CONNECTIONS`
connections alive, and :class:`SpreadTransport` gives each request to the
member with the fewest requests in flight, opening another member only when
every one is full. A run at concurrency ``j`` so holds about ``j`` connections,
each reused from the first request to the last, and each pool stays small.

Each member is built with the same options (proxy, ``trust_env``, timeouts),
so the environment's proxy variables, ``NO_PROXY`` and ``SSL_CERT_FILE`` work
as with one plain client; the TLS context is built once and shared.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

import httpx

if TYPE_CHECKING:
    import ssl

__all__ = ["MEMBER_CONNECTIONS", "SpreadTransport", "spread_client"]

MEMBER_CONNECTIONS = 8
"""Requests in flight (and connections kept alive) per member client."""


class SpreadTransport(httpx.AsyncBaseTransport):
    """Sends each request through the least busy of several httpx clients, opening one more when all are full."""

    def __init__(self, make_member: Callable[[], httpx.AsyncClient], per_member: int = MEMBER_CONNECTIONS) -> None:
        self._make_member = make_member
        self._per_member = max(1, per_member)
        self._members = [make_member()]  # a proxy that cannot be used fails here, not at the first request
        self._busy = [0]

    @property
    def members(self) -> int:
        """How many member clients have been opened."""
        return len(self._members)

    def _pick(self) -> int:
        """The index of the least busy member (the first of equals), after opening one if all are full."""
        busy = self._busy
        index = min(range(len(busy)), key=busy.__getitem__)
        if busy[index] >= self._per_member:
            self._members.append(self._make_member())
            busy.append(0)
            index = len(busy) - 1
        return index

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` through a member; the member counts as busy until the response is closed."""
        index = self._pick()
        self._busy[index] += 1
        try:
            answer = await self._members[index].send(request, stream=True)
        except BaseException:
            self._busy[index] -= 1
            raise
        return httpx.Response(
            answer.status_code,
            headers=answer.headers,
            stream=_Released(answer, lambda: self._release(index)),
            extensions=answer.extensions,
        )

    def _release(self, index: int) -> None:
        self._busy[index] -= 1

    async def aclose(self) -> None:
        """Close every member client and its connections."""
        members, self._members, self._busy = self._members, [], []
        for member in members:
            await member.aclose()


class _Released(httpx.AsyncByteStream):
    """A member's response body, read raw (the outer client decodes it); closing it frees the member's place."""

    def __init__(self, answer: httpx.Response, release: Callable[[], None]) -> None:
        self._answer = answer
        self._release: Callable[[], None] | None = release

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._answer.aiter_raw():
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._answer.aclose()
        finally:
            release, self._release = self._release, None
            if release is not None:
                release()


def spread_client(
    timeout: httpx.Timeout, proxy: str | None = None, per_member: int = MEMBER_CONNECTIONS
) -> httpx.AsyncClient:
    """One client over :class:`SpreadTransport`; each member takes ``proxy`` or the environment's proxies.

    Raises what ``httpx.AsyncClient`` raises for a proxy it cannot use, at once
    (the first member is built here).
    """
    tls: ssl.SSLContext = httpx.create_ssl_context(trust_env=True)
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=per_member)

    def member() -> httpx.AsyncClient:
        # No cap on open connections: the member never has more requests than it keeps, and httpcore can lose a
        # connection to a request cancelled half-way, which under a cap would hold its place for good.
        return httpx.AsyncClient(limits=limits, timeout=timeout, proxy=proxy, trust_env=True, verify=tls)

    return httpx.AsyncClient(transport=SpreadTransport(member, per_member), timeout=timeout, trust_env=False)
