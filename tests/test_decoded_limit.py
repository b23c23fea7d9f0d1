"""Compressed answers: the body size limit holds after decoding, and compression bombs cost no memory.

A loopback server sends real gzip bombs (a 1 MB body that expands to 1 GiB,
and a body of a few tens of kilobytes in ``gzip, gzip`` that expands to
16 GiB); a separate Python process reads each with the run's own client and
``request_json``, so that its peak memory is its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socketserver
import struct
import subprocess
import sys
import threading
import zlib
from pathlib import Path
from typing import Any

import pytest

from tsuka_core.backends.http import MAX_BODY_BYTES, StatusError, request_json
from tsuka_core.errors import RequestError
from tsuka_core.run.session import make_client

BLOCK = 1 << 20
"""The zero block a bomb repeats: 1 MiB."""
PEAK_LIMIT_MIB = 150
_POLY = 0xEDB88320
_STATUS = Path("/proc/self/status")

CHILD = """
import asyncio, json, sys
from tsuka_core.backends.http import request_json
from tsuka_core.errors import RequestError
from tsuka_core.run.session import make_client

async def main(url):
    async with make_client(1, 60.0) as client:
        try:
            reply = await request_json(client, "POST", url, body={"q": 1}, retries=0)
        except RequestError as exc:
            return str(exc)
    return f"read {len(json.dumps(reply.data))} characters"

message = asyncio.run(main(sys.argv[1]))
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print(json.dumps({"message": message, "peak_mib": peak / 1024}))
"""


# --- the bombs ----------------------------------------------------------------------------------------------------


def _times(matrix: list[int], vector: int) -> int:
    total = 0
    for column in matrix:
        if not vector:
            break
        if vector & 1:
            total ^= column
        vector >>= 1
    return total


def crc32_of_zeros(length: int) -> int:
    """``zlib.crc32(bytes(length))`` without the bytes: the CRC register advanced over zeros by squaring its step."""
    step = [_POLY] + [1 << n for n in range(31)]  # the register after one zero bit
    for _ in range(3):  # two, four, eight zero bits: one zero byte
        step = [_times(step, column) for column in step]
    register = 0xFFFFFFFF
    while length:
        if length & 1:
            register = _times(step, register)
        length >>= 1
        step = [_times(step, column) for column in step]
    return register ^ 0xFFFFFFFF


def gzip_of_zeros(size: int) -> bytes:
    """A complete gzip stream of ``size`` zero bytes (whole MiB), made of one compressed MiB repeated.

    Each MiB is compressed after a full flush, which starts the compressor
    afresh at a byte boundary, so every block after the first is the same bytes.
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    first = compressor.compress(bytes(BLOCK)) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(bytes(BLOCK)) + compressor.flush(zlib.Z_FULL_FLUSH)
    last_block = compressor.flush()[:-8]  # without the trailer, which is for two blocks
    trailer = struct.pack("<II", crc32_of_zeros(size), size & 0xFFFFFFFF)
    return b"".join([first, again * (size // BLOCK - 1), last_block, trailer])


def gzip(data: bytes) -> bytes:
    """``data`` in gzip."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    return compressor.compress(data) + compressor.flush()


@pytest.fixture(scope="session")
def bombs() -> dict[str, bytes]:
    """The two bombs: ``gzip`` (1 GiB of zeros) and ``gzip, gzip`` (16 GiB of zeros)."""
    return {"gzip": gzip_of_zeros(1 << 30), "gzip, gzip": gzip(gzip_of_zeros(16 << 30))}


def test_the_bombs_are_what_they_claim() -> None:
    for n in [*range(70), BLOCK, 12_345_678]:
        assert crc32_of_zeros(n) == zlib.crc32(bytes(n))
    assert zlib.decompress(gzip_of_zeros(8 * BLOCK), 31) == bytes(8 * BLOCK)  # zlib checks CRC and length too
    inner = gzip_of_zeros(16 << 30)
    assert zlib.decompress(gzip(inner), 31) == inner
    assert len(inner) // 1024**2 == 16  # 16 MiB of gzip, each MiB of it 1 GiB of zeros


# --- a raw server -------------------------------------------------------------------------------------------------


class _Answer(socketserver.BaseRequestHandler):
    """Reads one request, keeps its head, sends the canned answer and closes."""

    server: BodyServer

    def handle(self) -> None:
        data = b""
        while b"\r\n\r\n" not in data and len(data) < 65536:
            chunk = self.request.recv(65536)
            if not chunk:
                return
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        self.server.heads.append(head.decode("latin-1"))
        fields = (line.partition(b":") for line in head.split(b"\r\n")[1:])
        length = next((int(value) for name, _, value in fields if name.strip().lower() == b"content-length"), 0)
        while len(body) < length:
            chunk = self.request.recv(65536)
            if not chunk:
                return
            body += chunk
        with contextlib.suppress(OSError):  # the client stopped reading: what it should do with a bomb
            self.request.sendall(self.server.answer)


class BodyServer(socketserver.ThreadingTCPServer):
    """A loopback HTTP server that answers every request with 200, ``headers`` and ``body``; a context manager."""

    daemon_threads = True

    def __init__(self, headers: dict[str, str], body: bytes, *, status: str = "200 OK") -> None:
        super().__init__(("127.0.0.1", 0), _Answer)
        lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self.answer = f"HTTP/1.1 {status}\r\ncontent-length: {len(body)}\r\n{lines}\r\n".encode() + body
        self.heads: list[str] = []

    def __enter__(self) -> BodyServer:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()

    @property
    def url(self) -> str:
        """Where to send requests."""
        return f"http://127.0.0.1:{self.server_address[1]}/v1/chat/completions"


def read_apart(url: str) -> dict[str, Any]:
    """Send one request with the run's client in a Python process of its own: its error and its peak RSS."""
    done = subprocess.run([sys.executable, "-c", CHILD, url], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def read_here(url: str, **options: Any) -> Any:
    """Send one request with the run's client and ``request_json`` in this process; the decoded JSON."""

    async def main() -> Any:
        async with make_client(1, 30.0) as client:
            return (await request_json(client, "POST", url, body={"q": 1}, retries=0, **options)).data

    return asyncio.run(main())


# --- bombs --------------------------------------------------------------------------------------------------------

needs_proc = pytest.mark.skipif(not _STATUS.exists(), reason="peak memory is read from /proc/self/status")


@needs_proc
def test_a_gzip_bomb_stops_at_the_limit_without_the_memory_it_would_take(bombs: dict[str, bytes]) -> None:
    assert 1_000_000 < len(bombs["gzip"]) < 1_100_000  # 1 MB on the wire, 1 GiB decoded
    with BodyServer({"content-type": "application/json", "content-encoding": "gzip"}, bombs["gzip"]) as server:
        result = read_apart(server.url)
    assert result["message"] == (
        f"POST {server.url}: the response body is larger than {MAX_BODY_BYTES:,} bytes after gzip decoding; not read"
    )
    assert result["peak_mib"] < PEAK_LIMIT_MIB


@needs_proc
def test_a_bomb_in_two_layers_of_gzip_is_refused_unread(bombs: dict[str, bytes]) -> None:
    assert len(bombs["gzip, gzip"]) < 64 * 1024  # tens of kilobytes on the wire, 16 GiB decoded
    headers = {"content-type": "application/json", "content-encoding": "gzip, gzip"}
    with BodyServer(headers, bombs["gzip, gzip"]) as server:
        result = read_apart(server.url)
    assert result["message"] == (
        f"POST {server.url}: the response is in content encoding 'gzip, gzip'; only one gzip or deflate layer is read"
    )
    assert result["peak_mib"] < PEAK_LIMIT_MIB


# --- compressed answers that are fine, and those refused ------------------------------------------------------------

ANSWER = {"choices": [{"message": {"role": "assistant", "content": "word " * 20_000}}]}
"""An answer of about 100 kB that compresses well."""


def deflate(data: bytes) -> bytes:
    """``data`` in the zlib format HTTP calls deflate."""
    return zlib.compress(data, 9)


def bare_deflate(data: bytes) -> bytes:
    """``data`` in deflate without the zlib wrapper, as some servers send it."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        ("gzip", gzip),
        ("deflate", deflate),
        ("deflate", bare_deflate),
        ("identity, gzip", gzip),
        ("GZIP", gzip),
        ("identity", bytes),
    ],
)
def test_an_answer_in_gzip_or_deflate_is_decoded(encoding: str, encode: Any) -> None:
    with BodyServer({"content-encoding": encoding}, encode(json.dumps(ANSWER).encode())) as server:
        assert read_here(server.url) == ANSWER
    assert "accept-encoding: gzip, deflate" in server.heads[0].lower()


def test_the_limit_counts_decoded_bytes() -> None:
    body = gzip(json.dumps({"pad": "x" * 500}).encode())
    assert len(body) < 100
    with BodyServer({"content-encoding": "gzip"}, body) as server:
        with pytest.raises(RequestError, match=r"larger than 100 bytes after gzip decoding; not read$"):
            read_here(server.url, max_bytes=100)
        assert read_here(server.url, max_bytes=600) == {"pad": "x" * 500}


@pytest.mark.parametrize("encoding", ["br", "zstd", "compress", "gzip, deflate", "deflate, gzip, gzip"])
def test_other_or_stacked_encodings_are_refused(encoding: str) -> None:
    refused = pytest.raises(RequestError, match=f"content encoding '{encoding}'; only one gzip or deflate layer")
    with BodyServer({"content-encoding": encoding}, gzip(b"{}")) as server, refused:
        read_here(server.url)


def test_a_broken_gzip_body_is_a_request_error() -> None:
    body = gzip(json.dumps(ANSWER).encode())
    broken = body[:20] + bytes(64) + body[84:]
    refused = pytest.raises(RequestError, match=r"the response's gzip encoding is broken \(Error -3 ")
    with BodyServer({"content-encoding": "gzip"}, broken) as server, refused:
        read_here(server.url)


def test_an_error_answer_in_gzip_is_decoded_for_its_message() -> None:
    body = gzip(json.dumps({"error": {"message": "model not found"}}).encode())
    refused = pytest.raises(StatusError, match=r"HTTP 404: model not found$")
    with BodyServer({"content-encoding": "gzip"}, body, status="404 Not Found") as server, refused:
        read_here(server.url)


def test_a_caller_may_ask_for_another_encoding() -> None:
    with BodyServer({}, b"[1]") as server:
        assert read_here(server.url, headers={"accept-encoding": "identity"}) == [1]
    assert "accept-encoding: identity" in server.heads[0].lower()
    assert "gzip" not in server.heads[0].lower()
