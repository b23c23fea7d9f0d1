"""A loopback TCP relay that counts the connections it accepts, optionally ending TLS (counting handshakes).

Usage::

    with LoopbackServer(handler) as server, CountingRelay(server.port) as relay:
        ...  # point the client at relay.url ("http://127.0.0.1:PORT/v1")
    assert relay.accepted <= 32

With ``tls=(cert, key)`` the relay is an HTTPS server (``relay.url`` starts
``https://``): each accepted connection is a completed TLS handshake, and the
plain bytes go on to the target. The relay runs its own event loop in a thread
and stops, closing every connection, when the ``with`` block ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import threading
from pathlib import Path
from types import TracebackType

__all__ = ["CountingRelay"]


class CountingRelay:
    """Relays 127.0.0.1:<its port> to 127.0.0.1:``target``, counting accepted connections."""

    def __init__(self, target: int, tls: tuple[Path, Path] | None = None) -> None:
        self.target = target
        self.accepted = 0
        self.port = 0
        self._context: ssl.SSLContext | None = None
        if tls is not None:
            self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self._context.load_cert_chain(*tls)
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._stop: asyncio.Event | None = None

    @property
    def url(self) -> str:
        """The relay's OpenAI-style base URL."""
        scheme = "https" if self._context is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> CountingRelay:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the relay did not start")
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _run(self) -> None:
        self._loop.run_until_complete(self._serve())
        self._loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._relay, "127.0.0.1", 0, ssl=self._context)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()
            server.close()
            for task in asyncio.all_tasks() - {asyncio.current_task()}:
                task.cancel()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1  # after the TLS handshake, when there is one
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pump(reader, up_writer), _pump(up_reader, writer), return_exceptions=True)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy ``reader`` to ``writer`` until either side closes, then close ``writer``."""
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        with contextlib.suppress(ConnectionError, ssl.SSLError, RuntimeError):
            writer.close()
