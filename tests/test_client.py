"""The run's HTTP client: connections are reused only when they can be, and a cut request holds none up."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from tsuka_core.backends.http import request_json
from tsuka_core.run.session import make_client

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
CUTS = 150
"""Requests cancelled, each at another moment between 0 and 3 ms after it was started."""


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answer ``{}`` to every request of the connection, after a millisecond."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(int(v) for k, _, v in (line.partition(b":") for line in head.split(b"\r\n"))
                          if k.strip().lower() == b"content-length")  # fmt: skip
            await reader.readexactly(length)
            await asyncio.sleep(0.001)
            writer.write(ANSWER)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, StopIteration):
        pass
    finally:
        writer.close()


def test_a_request_cancelled_at_any_moment_never_holds_up_the_next() -> None:
    """A refused effort or Ctrl-C cancels requests in flight; the next request must not wait on their connection.

    A connection left half-way through an exchange (cancelled while connecting,
    sending or reading) and handed out again would make the next request wait
    for the whole timeout, or read the answer meant for the cancelled one.
    """

    async def main() -> list[str]:
        problems: list[str] = []
        server = await asyncio.start_server(_handle, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/chat/completions"
        async with server, make_client(2, timeout=3.0) as client:
            for cut in range(CUTS):
                doomed = asyncio.ensure_future(client.post(url, json={"cut": cut}))
                await asyncio.sleep(0.003 * cut / CUTS)
                doomed.cancel()
                await asyncio.gather(doomed, return_exceptions=True)
                started = time.monotonic()
                try:
                    reply = await client.post(url, json={})
                    if reply.status_code != 200:
                        problems.append(f"cut {cut}: HTTP {reply.status_code}")
                except httpx.HTTPError as exc:
                    problems.append(f"cut {cut}: {type(exc).__name__}")
                if time.monotonic() - started > 1.0:
                    problems.append(f"cut {cut}: the next request took {time.monotonic() - started:.1f} s")
                if problems:
                    break  # one is enough: each costs the whole timeout
            server.close()
        return problems

    assert asyncio.run(main()) == []


async def _answer_then_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answer one request without ``Connection: close``, then close the connection anyway."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(int(v) for k, _, v in (line.partition(b":") for line in head.split(b"\r\n"))
                      if k.strip().lower() == b"content-length")  # fmt: skip
        await reader.readexactly(length)
        writer.write(ANSWER)
        await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, StopIteration):
        pass
    finally:
        writer.close()


@pytest.mark.parametrize("concurrency", [1, 8])
def test_a_server_that_closes_after_every_answer_costs_no_retry(concurrency: int) -> None:
    """A connection the server closed after answering is never sent the next request (which would fail it)."""

    async def main() -> tuple[list[int], int]:
        attempts: list[int] = []
        connections = 0

        async def counted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal connections
            connections += 1
            await _answer_then_close(reader, writer)

        server = await asyncio.start_server(counted, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/chat/completions"
        async with server, make_client(concurrency, timeout=5.0) as client:

            async def worker(n: int) -> None:
                for step in range(n):
                    reply = await request_json(client, "POST", url, body={"step": step}, retries=3, backoff_base=0.0)
                    attempts.append(reply.attempts)

            await asyncio.gather(*(worker(200 // concurrency) for _ in range(concurrency)))
            server.close()
        return attempts, connections

    attempts, connections = asyncio.run(main())
    assert attempts == [1] * 200
    assert connections == 200
