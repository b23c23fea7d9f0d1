"""Server-sent events read from a response within a size limit: each ``data:`` line and when it arrived.

Chat-completion servers (OpenAI, vLLM, llama.cpp, SGLang, Ollama's ``/v1``)
put each chunk on one ``data:`` line, so each such line is taken as one event;
comments (``:``), ``event:``, ``id:`` and ``retry:`` lines and blank lines are
skipped. Lines end in ``\\n`` or ``\\r\\n``; a last line without an end is read
too. Bytes that are not UTF-8 are replaced.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING

from tsuka_core.backends.bounded import decoded_chunks
from tsuka_core.errors import RequestError

if TYPE_CHECKING:
    import httpx

__all__ = ["DONE", "is_event_stream", "sse_data"]

DONE = "[DONE]"
"""The data of the event that ends an OpenAI-style stream."""


def is_event_stream(response: httpx.Response) -> bool:
    """True when ``response`` says its body is server-sent events (``text/event-stream``)."""
    kind = str(response.headers.get("content-type", "")).split(";", 1)[0]
    return kind.strip().lower() == "text/event-stream"


async def sse_data(
    response: httpx.Response, limit: int, label: str, clock: Callable[[], float] = time.perf_counter
) -> AsyncGenerator[tuple[str, float], None]:
    """Each ``data:`` line's value and the ``clock()`` reading when the bytes that ended it arrived.

    The decoded body counts against ``limit`` bytes as a whole body does in
    :func:`~tsuka_core.backends.bounded.read_bounded`: past it, a RequestError.
    A line held back until its end arrives never takes more than that limit.
    """
    size = 0
    pending = bytearray()
    async with aclosing(decoded_chunks(response, label)) as chunks:
        async for chunk in chunks:
            size += len(chunk)
            if size > limit:
                raise RequestError(f"{label}: the response stream is larger than {limit:,} bytes; not read further")
            now = clock()
            pending += chunk
            if b"\n" not in chunk:
                continue
            *lines, rest = bytes(pending).split(b"\n")
            pending = bytearray(rest)
            for line in lines:
                data = _data(line)
                if data is not None:
                    yield data, now
    last = _data(bytes(pending))
    if last is not None:
        yield last, clock()


def _data(line: bytes) -> str | None:
    """The value of a ``data:`` line (one leading space dropped), else None."""
    field, colon, value = line.removesuffix(b"\r").partition(b":")
    if not colon or field != b"data":
        return None
    return value.removeprefix(b" ").decode("utf-8", errors="replace")
