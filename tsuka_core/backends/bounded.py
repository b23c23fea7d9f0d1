"""Reading a response body within a size limit that holds after content decoding, however much the body expands."""

from __future__ import annotations

import zlib
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from contextlib import aclosing
from typing import TYPE_CHECKING

from tsuka_core.backends.budget import LARGE_BODY_BYTES, take_large_place
from tsuka_core.errors import RequestError

if TYPE_CHECKING:
    import httpx

__all__ = ["ACCEPT_ENCODING", "content_encodings", "decoded_chunks", "read_bounded"]

ACCEPT_ENCODING = "gzip, deflate"
"""The content encodings asked for, and the only ones read: one layer of gzip or deflate, or none."""
STEP = 1024 * 1024
"""The most bytes one decoding step makes."""
_READABLE = frozenset(ACCEPT_ENCODING.split(", "))


async def read_bounded(response: httpx.Response, limit: int, *, truncate: bool, label: str) -> bytes:
    """The decoded body of ``response``, at most ``limit`` bytes: cut there when ``truncate``, else a RequestError.

    The body is decoded here, :data:`STEP` bytes at most at a time, and the
    decoded size is counted as it grows: httpx decodes each network read in one
    step with no bound on what it makes, and a few kilobytes of gzip can make
    megabytes. So a compressed body stops being read once it has grown past
    ``limit``, and the memory it takes stays near ``limit``. A body past
    :data:`~tsuka_core.backends.budget.LARGE_BODY_BYTES` (declared or read) waits
    for a place of the memory budget before it is read further. A body in an
    encoding other than those of :data:`ACCEPT_ENCODING`, or in several layers
    (each multiplying the last), is refused before any of it is read.
    ``label`` names the request in errors.
    """
    encodings = content_encodings(response)
    after = f" after {encodings[0]} decoding" if encodings else ""
    declared = response.headers.get("content-length", "")
    if not truncate and declared.isdigit() and int(declared) > limit:
        _readable(response, encodings, label)
        raise RequestError(f"{label}: the response body is larger than {limit:,} bytes{after}; not read")
    chunks: list[bytes] = []
    size = 0
    if declared.isdigit() and int(declared) > LARGE_BODY_BYTES:
        await take_large_place()
    async with aclosing(decoded_chunks(response, label)) as decoded:
        async for chunk in decoded:
            if size <= LARGE_BODY_BYTES < size + len(chunk):
                await take_large_place()
            size += len(chunk)
            if size > limit:
                if not truncate:
                    raise RequestError(f"{label}: the response body is larger than {limit:,} bytes{after}; not read")
                chunks.append(chunk[: len(chunk) - (size - limit)])
                return b"".join(chunks)
            chunks.append(chunk)
    return b"".join(chunks)


async def decoded_chunks(response: httpx.Response, label: str) -> AsyncGenerator[bytes, None]:
    """The body of ``response`` as it arrives, decoded :data:`STEP` bytes at most at a time; the caller bounds it.

    An encoding other than those of :data:`ACCEPT_ENCODING`, or several layers,
    is a RequestError before any of the body is read.
    """
    encodings = content_encodings(response)
    _readable(response, encodings, label)
    layer = _Layer(encodings[0]) if encodings and not response.is_stream_consumed else None
    async for raw in _raw(response):
        for chunk in layer.decode(raw, label) if layer is not None else (raw,):
            yield chunk


def _readable(response: httpx.Response, encodings: list[str], label: str) -> None:
    if len(encodings) > 1 or not _READABLE.issuperset(encodings):
        named = " ".join(response.headers.get("content-encoding", "").split())[:60]
        raise RequestError(
            f"{label}: the response is in content encoding {named!r}; only one gzip or deflate layer is read"
        )


async def _raw(response: httpx.Response) -> AsyncIterator[bytes]:
    """The body as it comes, or as httpx decoded it when it was read already (an answer made in memory)."""
    if response.is_stream_consumed:
        yield response.content
        return
    async for chunk in response.aiter_raw():
        yield chunk


def content_encodings(response: httpx.Response) -> list[str]:
    """The content encodings of ``response`` in the order they were applied, ``identity`` left out."""
    named = (value.strip().lower() for value in response.headers.get_list("content-encoding", split_commas=True))
    return [value for value in named if value not in ("", "identity")]


class _Layer:
    """One layer of gzip or deflate, decoded in steps of at most :data:`STEP` bytes."""

    def __init__(self, encoding: str) -> None:
        self._deflate = encoding == "deflate"
        self._encoding = encoding
        self._zlib = zlib.decompressobj(zlib.MAX_WBITS if self._deflate else zlib.MAX_WBITS | 16)
        self._fresh = True

    def decode(self, data: bytes, label: str) -> Iterator[bytes]:
        """The bytes ``data`` decodes to, a step at a time; broken data is a RequestError."""
        try:
            piece = self._first(data)
            yield piece
            while self._zlib.unconsumed_tail or len(piece) == STEP:
                piece = self._zlib.decompress(self._zlib.unconsumed_tail, STEP)
                yield piece
        except zlib.error as exc:
            raise RequestError(f"{label}: the response's {self._encoding} encoding is broken ({exc})") from None

    def _first(self, data: bytes) -> bytes:
        fresh, self._fresh = self._fresh, False
        try:
            return self._zlib.decompress(data, STEP)
        except zlib.error:
            if not (fresh and self._deflate):
                raise
        self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)  # bare deflate without the zlib wrapper, as some servers send
        return self._zlib.decompress(data, STEP)
