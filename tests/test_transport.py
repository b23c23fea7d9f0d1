"""The run's client (httpx's own transport, as ``make_client`` sets it up) against raw servers that misbehave."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import pytest

from tsuka_core.run.session import make_client

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def _answer(body: bytes = b"{}", *, extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n%b\r\n%b" % (
        len(body),
        extra,
        body,
    )


async def _request(reader: asyncio.StreamReader) -> bytes:
    """One whole request off the connection: its head and its body."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return head + await reader.readexactly(length)


class Server:
    """A raw asyncio server on 127.0.0.1 running ``script`` on each connection; it counts connections."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.connections = 0
        self.server: asyncio.Server | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.script(reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1/chat/completions"

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()


def run(coroutine: Awaitable[None]) -> None:
    asyncio.run(asyncio.wait_for(coroutine, 20))  # type: ignore[arg-type]


async def keep_alive(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while True:
        await _request(reader)
        writer.write(_answer(b'{"ok": true}'))
        await writer.drain()


def test_sequential_requests_share_one_keep_alive_connection() -> None:
    async def main() -> None:
        server = Server(keep_alive)
        async with server as url, make_client(4, timeout=5.0) as client:
            for n in range(5):
                reply = await client.post(url, json={"n": n})
                assert reply.status_code == 200
                assert reply.json() == {"ok": True}
                assert reply.http_version == "HTTP/1.1"
                assert reply.reason_phrase == "OK"
        assert server.connections == 1

    run(main())


def test_requests_in_flight_each_get_a_connection_then_reuse_them() -> None:
    async def slow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await _request(reader)
            await asyncio.sleep(0.05)
            writer.write(_answer())
            await writer.drain()

    async def main() -> None:
        server = Server(slow)
        async with server as url, make_client(8, timeout=5.0) as client:
            for _ in range(3):
                replies = await asyncio.gather(*(client.post(url, json={}) for _ in range(8)))
                assert [r.status_code for r in replies] == [200] * 8
        assert server.connections == 8

    run(main())


@pytest.mark.parametrize(
    "after_answer",
    [
        pytest.param(b"", id="server closes after answering"),
        pytest.param(b"HTTP/1.1 200 OK\r\n\r\n", id="server sends bytes nobody asked for"),
    ],
)
def test_a_connection_the_server_closed_or_dirtied_while_idle_is_not_reused(after_answer: bytes) -> None:
    async def once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request(reader)
        writer.write(_answer())
        await writer.drain()
        if after_answer:
            await asyncio.sleep(0.02)
            writer.write(after_answer)
            await writer.drain()
            await asyncio.sleep(1)

    async def main() -> None:
        server = Server(once)
        async with server as url, make_client(1, timeout=5.0) as client:
            for _ in range(3):
                assert (await client.post(url, json={})).status_code == 200
                await asyncio.sleep(0.1)
        assert server.connections == 3

    run(main())


def test_connection_close_and_chunked_answers_are_read_whole() -> None:
    head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
    chunked = head + b'5\r\n{"a":\r\n3\r\n 1}\r\n0\r\n\r\n'

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request(reader)
        writer.write(chunked)
        await writer.drain()

    async def main() -> None:
        server = Server(script)
        async with server as url, make_client(1, timeout=5.0) as client:
            for _ in range(2):
                reply = await client.post(url, json={})
                assert reply.json() == {"a": 1}
        assert server.connections == 2

    run(main())


def test_informational_answers_are_skipped() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request(reader)
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n" + _answer(b"[1]"))
        await writer.drain()

    async def main() -> None:
        async with Server(script) as url, make_client(1, timeout=5.0) as client:
            assert (await client.post(url, json={})).json() == [1]

    run(main())


@pytest.mark.parametrize(
    ("script_answer", "error"),
    [
        pytest.param(b"", httpx.RemoteProtocolError, id="closed before answering"),
        pytest.param(_answer(b'{"long": 1}')[:-4], httpx.RemoteProtocolError, id="closed mid-body"),
        pytest.param(b"HTTP/1.1 twohundred\r\n\r\n", httpx.RemoteProtocolError, id="not HTTP"),
        pytest.param(b"HTTP/1.1 200 OK\r\nx: " + b"a" * 200_000, httpx.RemoteProtocolError, id="endless head"),
    ],
)
def test_broken_answers_raise_httpx_errors_and_the_next_request_works(
    script_answer: bytes, error: type[Exception]
) -> None:
    first = True

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal first
        if first:
            first = False
            await _request(reader)
            writer.write(script_answer)
            await writer.drain()
            return
        await keep_alive(reader, writer)

    async def main() -> None:
        async with Server(script) as url, make_client(1, timeout=5.0) as client:
            with pytest.raises(error):
                await client.post(url, json={})
            assert (await client.post(url, json={})).status_code == 200

    run(main())


def test_a_silent_server_times_out_reading_and_its_connection_is_dropped() -> None:
    answered = False

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal answered
        await _request(reader)
        if not answered:
            answered = True
            await asyncio.sleep(5)
            return
        writer.write(_answer())
        await writer.drain()
        await keep_alive(reader, writer)

    async def main() -> None:
        server = Server(script)
        async with server as url, make_client(1, timeout=0.3) as client:
            with pytest.raises(httpx.ReadTimeout):
                await client.post(url, json={})
            assert (await client.post(url, json={})).status_code == 200
        assert server.connections == 2

    run(main())


def test_nothing_listening_is_a_connect_error() -> None:
    async def main() -> None:
        holder = await asyncio.start_server(keep_alive, "127.0.0.1", 0)
        port = holder.sockets[0].getsockname()[1]
        holder.close()
        await holder.wait_closed()
        async with make_client(1, timeout=5.0) as client:
            with pytest.raises(httpx.ConnectError):
                await client.post(f"http://127.0.0.1:{port}/v1/chat/completions", json={})

    run(main())


def test_an_unknown_scheme_is_refused() -> None:
    async def main() -> None:
        async with make_client(1, timeout=5.0) as client:
            with pytest.raises(httpx.UnsupportedProtocol):
                await client.get("ftp://127.0.0.1/v1/models")

    run(main())


def test_https_verifies_the_certificate_and_talks_through_tls_when_trusted(
    certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = certificate
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert, key)

    async def main(expect_trusted: bool) -> None:
        server = await asyncio.start_server(keep_alive, "127.0.0.1", 0, ssl=server_context)
        url = f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/chat/completions"
        async with server, make_client(1, timeout=5.0) as client:
            if expect_trusted:
                for _ in range(2):
                    assert (await client.post(url, json={})).json() == {"ok": True}
            else:
                with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                    await client.post(url, json={})
            server.close()

    run(main(expect_trusted=False))
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    run(main(expect_trusted=True))


def test_a_cookie_the_server_sets_goes_back_with_the_next_requests() -> None:
    seen: list[bytes] = []

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        n = 0
        while True:
            request = await _request(reader)
            seen.append(
                next((line.lower() for line in request.split(b"\r\n") if line.lower().startswith(b"cookie:")), b"")
            )
            extra = b"set-cookie: lb=node-7; Path=/\r\n" if n == 1 else b""
            writer.write(_answer(extra=extra))
            await writer.drain()
            n += 1

    async def main() -> None:
        async with Server(script) as url, make_client(1, timeout=5.0) as client:
            for _ in range(4):
                assert (await client.post(url, json={})).status_code == 200
            assert dict(client.cookies) == {"lb": "node-7"}

    run(main())
    assert seen == [b"", b"", b"cookie: lb=node-7", b"cookie: lb=node-7"]
