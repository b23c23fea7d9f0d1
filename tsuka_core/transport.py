"""The run's HTTP/1.1 transport for httpx: one keep-alive connection per request in flight, on asyncio and h11.

httpx's own transport goes through httpcore and anyio, which is most of the
client's CPU per request, and that work runs several times slower after the
process has waited for the server (``docs/performance.md``). This transport
keeps what httpx gives a backend (the client, requests, responses, timeouts,
the error classes) and replaces only the wire: an :class:`asyncio.Protocol`
feeding h11, the same HTTP/1.1 parser httpcore uses.

Each request in flight has a connection of its own (a shared pool that scans
its connections on every request costs more as the concurrency grows); an idle
connection is reused last-in first-out, and only while the server has neither
closed it nor sent anything on it since its last answer. A request that fails,
times out or is cancelled half-way closes its connection.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from typing import Any

import h11
import httpx

__all__ = ["WorkerTransport"]

MAX_HEAD_BYTES = 100 * 1024
"""The largest status line and headers accepted (as httpcore)."""

_DEFAULT_PORTS = {"http": 80, "https": 443}
_INCOMPLETE = "Server disconnected without sending a complete response."
_Origin = tuple[str, str, int]


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: the socket's bytes go straight into its h11 state machine."""

    def __init__(self, origin: _Origin) -> None:
        self.origin = origin
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)
        self.transport: asyncio.Transport | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.lost: Exception | None = None
        self.closed = False
        self._writable: asyncio.Future[None] | None = None

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.h11.receive_data(data)
        self._wake()

    def eof_received(self) -> bool:
        self.h11.receive_data(b"")
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.lost = exc
        self._wake()
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    def pause_writing(self) -> None:
        self._writable = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        self._writable = None

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # what the transport asks of it

    def reusable(self) -> bool:
        """True when the server has neither closed it nor sent anything since the last answer.

        Whatever arrives between two exchanges waits in h11's buffer, and an end
        of stream is noted there too: both show in ``trailing_data``.
        """
        state = self.h11
        return not self.closed and state.our_state is h11.IDLE and state.trailing_data == (b"", False)

    def close(self) -> None:
        """Close the socket; the connection is never used again."""
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    async def send(self, data: bytes, timeout: float | None) -> None:
        """Write ``data``, waiting at most ``timeout`` for room in the socket's buffer."""
        if self.closed or self.transport is None or self.transport.is_closing():
            raise httpx.WriteError("the connection was closed before the request was sent")
        self.transport.write(data)
        if self._writable is not None:
            try:
                async with asyncio.timeout(timeout):
                    await self._writable
            except TimeoutError:
                raise httpx.WriteTimeout("timed out sending the request") from None
            if self.closed:
                raise httpx.WriteError(_lost_reason(self.lost, "the server closed the connection while it was sent"))

    async def next_event(self, timeout: float | None) -> Any:
        """The next h11 event of the answer, waiting at most ``timeout`` for each arrival of bytes."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpx.RemoteProtocolError(_protocol_reason(exc, self.lost)) from None
            if event is not h11.NEED_DATA:
                return event
            if self.closed:
                raise httpx.ReadError(_lost_reason(self.lost, "the server closed the connection mid-answer"))
            self.waiter = waiter = loop.create_future()
            timer = None if timeout is None else loop.call_later(timeout, _expire, waiter)
            try:
                await waiter
            finally:
                self.waiter = None
                if timer is not None:
                    timer.cancel()


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(httpx.ReadTimeout("timed out waiting for the answer"))


def _lost_reason(exc: Exception | None, fallback: str) -> str:
    return f"{type(exc).__name__}: {exc}" if exc is not None else fallback


def _protocol_reason(exc: h11.RemoteProtocolError, lost: Exception | None) -> str:
    if "peer unexpectedly closed" in str(exc) or lost is not None:
        return _INCOMPLETE
    return str(exc) or "the server's answer is not valid HTTP/1.1"


class _Body(httpx.AsyncByteStream):
    """An answer's body, read from its connection; closing it hands the connection back or closes it."""

    def __init__(self, owner: WorkerTransport, connection: _Connection, timeout: float | None) -> None:
        self._owner, self._connection, self._timeout = owner, connection, timeout
        self._released = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection = self._connection
        while True:
            event = await connection.next_event(self._timeout)
            if isinstance(event, h11.Data):
                yield bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                return
            elif isinstance(event, h11.ConnectionClosed):
                raise httpx.RemoteProtocolError(_INCOMPLETE)

    async def aclose(self) -> None:
        if not self._released:
            self._released = True
            self._owner._release(self._connection)


class WorkerTransport(httpx.AsyncBaseTransport):
    """An httpx transport that gives each request in flight a keep-alive connection of its own.

    Connections are made on demand, so there are never more than the requests
    ever in flight at once, and an idle one is reused last-in first-out. The
    connections of one scheme share one SSL context, made when the first is
    needed: a verifying one for ``https``; plain ``http`` needs none.
    """

    def __init__(self) -> None:
        self._idle: dict[_Origin, list[_Connection]] = {}
        self._open: set[_Connection] = set()
        self._ssl: ssl.SSLContext | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` and return its answer, whose body streams from the connection."""
        timeouts = request.extensions.get("timeout") or {}
        connection = await self._connection(request, timeouts.get("connect"))
        try:
            state = connection.h11
            head = h11.Request(method=request.method, target=request.url.raw_path, headers=list(request.headers.raw))
            parts = [state.send(head)]
            body = await request.aread()
            if body:
                parts.append(state.send(h11.Data(data=body)))
            parts.append(state.send(h11.EndOfMessage()))
            await connection.send(b"".join(part for part in parts if part), timeouts.get("write"))
            read = timeouts.get("read")
            event = await connection.next_event(read)
            while isinstance(event, h11.InformationalResponse):
                event = await connection.next_event(read)
            if not isinstance(event, h11.Response):
                raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        except h11.LocalProtocolError as exc:
            self._drop(connection)
            raise httpx.LocalProtocolError(str(exc)) from None
        except BaseException:
            self._drop(connection)
            raise
        return httpx.Response(
            event.status_code,
            headers=event.headers.raw_items(),
            stream=_Body(self, connection, read),
            extensions={"http_version": b"HTTP/" + event.http_version, "reason_phrase": event.reason},
        )

    async def _connection(self, request: httpx.Request, timeout: float | None) -> _Connection:
        url = request.url
        scheme = url.scheme
        if scheme not in _DEFAULT_PORTS:
            raise httpx.UnsupportedProtocol(f"the URL scheme {scheme!r} is not http or https")
        origin = (scheme, url.host, url.port or _DEFAULT_PORTS[scheme])
        idle = self._idle.get(origin)
        while idle:
            connection = idle.pop()
            if connection.reusable():
                return connection
            self._drop(connection)
        context = self._context() if scheme == "https" else None
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                _, connection = await loop.create_connection(
                    lambda: _Connection(origin),
                    origin[1],
                    origin[2],
                    ssl=context,
                    server_hostname=origin[1] if context is not None else None,
                )
        except TimeoutError:
            raise httpx.ConnectTimeout(f"timed out connecting to {origin[1]}:{origin[2]}") from None
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__) from None
        self._open.add(connection)
        return connection

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = httpx.create_ssl_context()
        return self._ssl

    def _release(self, connection: _Connection) -> None:
        """Keep ``connection`` for the next request when its exchange ended cleanly, else close it."""
        state = connection.h11
        if state.our_state is h11.DONE and state.their_state is h11.DONE and not connection.closed:
            state.start_next_cycle()
            if connection.reusable():
                self._idle.setdefault(connection.origin, []).append(connection)
                return
        self._drop(connection)

    def _drop(self, connection: _Connection) -> None:
        connection.close()
        self._open.discard(connection)

    async def aclose(self) -> None:
        """Close every connection."""
        connections, self._open, self._idle = self._open, set(), {}
        for connection in connections:
            connection.close()
