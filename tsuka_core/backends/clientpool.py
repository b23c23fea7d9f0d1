"""The run's HTTP client: one httpx client whose requests go out through many small stock connection pools.

httpcore's pool looks at every connection it holds each time a request
starts or ends (a system call for each idle one) and, as of httpcore 1.0.9,
closes every idle connection once it holds more than it may keep idle. One
pool as large as the concurrency so costs every request in proportion to its
size, and a smaller one closes and reopens connections all run long. Here
:class:`SpreadTransport` holds stock members of :data:`MEMBER_CONNECTIONS`
kept connections each and gives each request a member with a free place,
opening another member only when none has one: a run at concurrency ``j``
holds about ``j`` connections, each reused from the first request to the last.

The members are ``httpx.AsyncHTTPTransport`` (through ``--proxy`` when given).
When the environment names proxies (``HTTP_PROXY``, ``HTTPS_PROXY``,
``ALL_PROXY``, with ``NO_PROXY``), each member is an ``httpx.AsyncClient``
instead, so that httpx itself picks the proxy of each URL. The TLS context
(with ``SSL_CERT_FILE``) is built once and shared.
"""

from __future__ import annotations

import urllib.request
from collections.abc import AsyncIterator, Callable

import httpx

__all__ = ["MEMBER_CONNECTIONS", "SpreadTransport", "spread_client"]

MEMBER_CONNECTIONS = 1
"""Requests in flight (and connections kept alive) per member: one, so that no pool ever scans another."""


class SpreadTransport(httpx.AsyncBaseTransport):
    """Sends each request through a member transport with a free place, opening one more when none has."""

    def __init__(
        self, make_member: Callable[[], httpx.AsyncBaseTransport], per_member: int = MEMBER_CONNECTIONS
    ) -> None:
        self._make_member = make_member
        self._per_member = max(1, per_member)
        self._members: list[httpx.AsyncBaseTransport] = []
        self._free: list[int] = []
        """One entry per free place, the member's index; the last freed is taken first (its connection is warm)."""
        self._open_member()  # a proxy that cannot be used fails here, not at the first request

    @property
    def members(self) -> int:
        """How many members have been opened."""
        return len(self._members)

    def _open_member(self) -> None:
        self._members.append(self._make_member())
        self._free.extend([len(self._members) - 1] * self._per_member)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` through a member; its place stays taken until the response is closed."""
        if not self._free:
            self._open_member()
        index = self._free.pop()
        try:
            answer = await self._members[index].handle_async_request(request)
        except BaseException:
            self._free.append(index)
            raise
        assert isinstance(answer.stream, httpx.AsyncByteStream)
        answer.stream = _Released(answer.stream, lambda: self._free.append(index))
        return answer

    async def aclose(self) -> None:
        """Close every member and its connections."""
        members, self._members, self._free = self._members, [], []
        for member in members:
            await member.aclose()


class _Released(httpx.AsyncByteStream):
    """A member's response body; closing it frees the member's place (once)."""

    def __init__(self, stream: httpx.AsyncByteStream, release: Callable[[], None]) -> None:
        self._stream = stream
        self._release: Callable[[], None] | None = release

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._stream.aclose()
        finally:
            release, self._release = self._release, None
            if release is not None:
                release()


class _ClientMember(httpx.AsyncBaseTransport):
    """A stock ``httpx.AsyncClient`` as a member transport: it chooses each URL's proxy as httpx does."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self._client = client

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        answer = await self._client.send(request, stream=True)
        return httpx.Response(
            answer.status_code, headers=answer.headers, stream=_Raw(answer), extensions=answer.extensions
        )

    async def aclose(self) -> None:
        await self._client.aclose()


class _Raw(httpx.AsyncByteStream):
    """A member client's response body as it came (the outer client decodes it)."""

    def __init__(self, answer: httpx.Response) -> None:
        self._answer = answer

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._answer.aiter_raw():
            yield chunk

    async def aclose(self) -> None:
        await self._answer.aclose()


def spread_client(
    timeout: httpx.Timeout, proxy: str | None = None, per_member: int = MEMBER_CONNECTIONS
) -> httpx.AsyncClient:
    """One client over :class:`SpreadTransport`: ``proxy`` when given, else the environment's proxies, if any.

    Raises what httpx raises for a proxy it cannot use, at once (the first
    member is built here).
    """
    tls = httpx.create_ssl_context(trust_env=True)
    # No cap on open connections: a member never has more requests than it keeps, and httpcore can lose a
    # connection to a request cancelled half-way, which under a cap would hold its place for good.
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=per_member)
    member: Callable[[], httpx.AsyncBaseTransport]
    if proxy is None and urllib.request.getproxies():  # what httpx reads for trust_env

        def member() -> httpx.AsyncBaseTransport:
            return _ClientMember(httpx.AsyncClient(limits=limits, timeout=timeout, trust_env=True, verify=tls))

    else:

        def member() -> httpx.AsyncBaseTransport:
            return httpx.AsyncHTTPTransport(verify=tls, limits=limits, proxy=proxy)

    return httpx.AsyncClient(transport=SpreadTransport(member, per_member), timeout=timeout, trust_env=False)
