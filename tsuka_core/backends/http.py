"""How backends exchange JSON with a server over HTTP: bounded reads, retries with jittered backoff, redacted URLs.

Any backend that speaks HTTP, built in or from a plugin, can use :func:`request_json`
through the ``httpx.AsyncClient`` the engine gives it:

- connection errors, timeouts, 408, 429 and 5xx are tried again, at most
  ``retries`` times, after an exponential backoff with full jitter, or after
  the server's ``Retry-After`` (seconds or an HTTP date, capped at
  :data:`RETRY_AFTER_CAP`) when it sends one;
- any other status of 300 or more fails at once with :class:`StatusError`,
  carrying the server's own message on one line (``error.message``, else
  ``error`` as a string, ``message`` or FastAPI's ``detail``, else the body as
  text: :func:`server_message`); so does one refusing the
  tool-call arguments a model wrote (:attr:`StatusError.blames_answer`);
- a body that is not JSON, or larger than :data:`MAX_BODY_BYTES` once decoded,
  fails with a :class:`~tsuka_core.RequestError` saying so; the size is counted
  while the body is decoded, so a small compressed body that expands to
  gigabytes stops at the limit; a body in more than one content encoding, or
  in one other than gzip or deflate (:data:`ACCEPT_ENCODING`, which every
  request asks for), is refused unread; invalid UTF-8 is decoded with
  replacement characters.

Every message names the request by its redacted URL, and any ``secrets`` given (an API key, the credentials
of :func:`url_secrets`) are masked in it; httpx's own log lines (logger ``httpx``) show the URL redacted too.
"""

from __future__ import annotations

import email.utils
import functools
import json
import logging
import math
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tsuka_core.backends.bounded import ACCEPT_ENCODING, read_bounded
from tsuka_core.backends.server_message import one_line, server_message
from tsuka_core.backends.tls import certificate_refused
from tsuka_core.errors import BackendError, RequestError
from tsuka_core.masking import mask_text
from tsuka_core.textsafe import scrub
from tsuka_core.urls import redact_url

if TYPE_CHECKING:  # httpx and asyncio load when a request is made: 'tsuka validate' never needs them
    import httpx

__all__ = [
    "ACCEPT_ENCODING",
    "BACKOFF_BASE",
    "BACKOFF_CAP",
    "MAX_BODY_BYTES",
    "RETRY_AFTER_CAP",
    "JsonReply",
    "StatusError",
    "request_json",
    "retry_after_seconds",
    "server_message",
]

BACKOFF_BASE = 0.5
"""Seconds of the first backoff step; each retry doubles it (read at call time, so tests may lower it)."""
BACKOFF_CAP = 20.0
"""The longest backoff step, in seconds."""
RETRY_AFTER_CAP = 60.0
"""The longest ``Retry-After`` honoured, in seconds."""
MAX_BODY_BYTES = 32 * 1024 * 1024
"""The largest response body read, after content decoding."""
_ERROR_BODY_BYTES = 64 * 1024
_RETRY_STATUSES = frozenset({408, 429})
_ARGUMENTS_REFUSED = re.compile(r"tool[ _-]?calls?\W+(?:\w+\W+){0,2}arguments", re.IGNORECASE)
_ACCEPT = {"Accept-Encoding": ACCEPT_ENCODING}

Sleep = Callable[[float], Awaitable[None]]
BodyReader = Callable[["httpx.Response", int, str, float], Awaitable[Any]]
"""Reads a successful body (response, byte limit, label, ``perf_counter`` at sending); bytes are decoded as JSON."""


class StatusError(RequestError):
    """The server answered with an error status; ``server_message`` is what it said, on one line."""

    def __init__(self, message: str, *, status: int, server_message: str, retryable: bool = False) -> None:
        super().__init__(message, status=status, retryable=retryable)
        self.server_message = server_message
        self.blames_answer = status in (400, 422, 500) and _ARGUMENTS_REFUSED.search(server_message) is not None
        """True when the server refused tool-call arguments a model wrote, sent back to it (llama.cpp's 500
        "Failed to parse tool call arguments as JSON"): a retry would be refused again."""


@dataclass(frozen=True)
class JsonReply:
    """A successful response: its decoded JSON body, its status, and how the exchange went."""

    data: Any
    status: int
    duration: float
    """Seconds the successful attempt took (earlier failed attempts and waits excluded)."""
    attempts: int
    """How many attempts were made, the successful one included."""
    size: int = 0
    """Bytes of the body as read (after content decoding); 0 when not known."""


@dataclass(frozen=True)
class _Call:
    method: str
    url: str
    body: Any
    headers: Mapping[str, str]
    timeout: float | None
    max_bytes: int
    label: str
    read_body: BodyReader | None = None


@dataclass(frozen=True)
class _Exchange:
    status: int
    reason: str
    headers: httpx.Headers
    raw: Any  # the body's bytes, or what read_body made of a successful one
    duration: float


class _TransientError(BackendError):
    """A failure worth another attempt, with the delay the server asked for (if any)."""

    def __init__(self, error: RequestError, retry_after: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after


class _RedactUrls(logging.Filter):
    """Shows every URL in a log record's arguments redacted (httpx logs each request's full URL)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redact_url(str(a)) if _is_url(a) else a for a in record.args)
        return True


def _is_url(value: object) -> bool:
    """True for an ``httpx.URL``, told without importing httpx (only httpx logs through the filtered logger)."""
    return type(value).__name__ == "URL" and type(value).__module__.startswith("httpx")


logging.getLogger("httpx").addFilter(_RedactUrls())


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait, capped at :data:`RETRY_AFTER_CAP`; ``None`` if unreadable.

    The header holds either a number of seconds or an HTTP date; a date in the
    past means "now".
    """
    if value is None or not value.strip():
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), RETRY_AFTER_CAP)


def _backoff(attempt: int, base: float, retry_after: float | None) -> float:
    if retry_after is not None:
        return retry_after
    return random.uniform(0.0, min(BACKOFF_CAP, base * 2.0**attempt))


async def request_json(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
    retries: int = 3,
    timeout: float | None = None,
    max_bytes: int | None = None,
    backoff_base: float | None = None,
    secrets: Sequence[str] = (),
    sleep: Sleep | None = None,
    read_body: BodyReader | None = None,
) -> JsonReply:
    """Send one request (``body`` as JSON, if given) and return the JSON answer, retrying transient failures.

    ``timeout`` bounds each attempt as a whole (and each network operation);
    ``None`` leaves the client's own timeouts. ``backoff_base`` and ``max_bytes``
    default to :data:`BACKOFF_BASE` and :data:`MAX_BODY_BYTES`; ``sleep`` replaces
    ``asyncio.sleep`` between attempts; ``read_body`` reads a successful body
    instead of :func:`read_bounded` (a stream, say). Raises :class:`StatusError` for an error
    status and :class:`~tsuka_core.RequestError` for anything else that fails
    for good; ``retryable`` on the error says whether the last failure was a
    transient one.
    """
    limit = MAX_BODY_BYTES if max_bytes is None else max_bytes
    call = _Call(method, url, body, _with_encodings(headers), timeout, limit, _label(method, url), read_body)
    attempts = max(retries, 0) + 1
    base = BACKOFF_BASE if backoff_base is None else backoff_base
    import asyncio

    pause = sleep or asyncio.sleep
    for attempt in range(attempts):
        try:
            exchange = await _exchange(client, call)
            data = _decode(exchange, call.label) if isinstance(exchange.raw, bytes) else exchange.raw
            size = len(exchange.raw) if isinstance(exchange.raw, bytes) else 0
            return JsonReply(data, exchange.status, exchange.duration, attempt + 1, size)
        except _TransientError as transient:
            if attempt + 1 >= attempts:
                raise _final(transient.error, secrets, attempts) from transient.__cause__
            await pause(_backoff(attempt, base, transient.retry_after))
        except RequestError as error:
            _final(error, secrets, 1)
            raise
    raise AssertionError("unreachable: the last attempt returns or raises")


def _with_encodings(headers: Mapping[str, str] | None) -> Mapping[str, str]:
    """``headers`` asking for the content encodings read (:data:`ACCEPT_ENCODING`), unless they ask already."""
    if headers is None:
        return _ACCEPT
    if any(name.lower() == "accept-encoding" for name in headers):
        return headers
    return {**_ACCEPT, **headers}


def _final(error: RequestError, secrets: Sequence[str], attempts: int) -> RequestError:
    """The error as the caller sees it: secrets masked, and how many attempts were made."""
    suffix = f" (gave up after {attempts} attempts)" if attempts > 1 else ""
    error.args = (mask_text(str(error), secrets) + suffix,)
    if isinstance(error, StatusError):
        error.server_message = mask_text(error.server_message, secrets)
    return error


async def _exchange(client: httpx.AsyncClient, call: _Call) -> _Exchange:
    """One attempt: send, read the body within its bound, and sort failures into transient or final."""
    import asyncio

    import httpx

    started = time.perf_counter()
    timeouts: Any = httpx.USE_CLIENT_DEFAULT if call.timeout is None else call.timeout
    try:
        async with (
            asyncio.timeout(call.timeout),
            client.stream(
                call.method, _parsed(call.url), json=call.body, headers=call.headers, timeout=timeouts
            ) as response,
        ):
            failed = not 200 <= response.status_code < 300
            limit = _ERROR_BODY_BYTES if failed else call.max_bytes
            if failed or call.read_body is None:
                raw: Any = await read_bounded(response, limit, truncate=failed, label=call.label)
            else:
                raw = await call.read_body(response, limit, call.label, started)
            duration = time.perf_counter() - started
            exchange = _Exchange(response.status_code, response.reason_phrase, response.headers, raw, duration)
    except (httpx.TimeoutException, TimeoutError) as exc:
        reason = f"timed out after {call.timeout:g} s" if call.timeout is not None else "timed out"
        raise _TransientError(RequestError(f"{call.label}: {reason}", retryable=True)) from exc
    except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
        if certificate_refused(exc):  # the same certificate would be refused again
            raise RequestError(f"{call.label}: {_transport_reason(exc)}") from exc
        raise _TransientError(RequestError(f"{call.label}: {_transport_reason(exc)}", retryable=True)) from exc
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise RequestError(f"{call.label}: {_transport_reason(exc)}") from exc
    except UnicodeEncodeError as exc:  # a header or the URL holds what HTTP cannot carry; never echo the value
        raise RequestError(
            f"{call.label}: a header or the URL holds a character HTTP cannot send ({exc.reason})"
        ) from None
    _check_status(exchange, call.label)
    return exchange


@functools.lru_cache(maxsize=256)
def _label(method: str, url: str) -> str:
    """How errors name a request: the method and the URL without its secrets."""
    return f"{method} {redact_url(url)}"


@functools.lru_cache(maxsize=256)
def _parsed(url: str) -> httpx.URL | str:
    """``url`` parsed once for all the requests sent to it; as it is when httpx cannot parse it (sending fails)."""
    import httpx

    try:
        return httpx.URL(url)
    except Exception:
        return url


def _transport_reason(exc: Exception) -> str:
    import httpx

    kind = type(exc).__name__
    detail = one_line(str(exc))
    if isinstance(exc, httpx.ConnectError):
        return f"cannot connect ({detail or kind})"
    return f"{kind}: {detail}" if detail else kind


def _check_status(exchange: _Exchange, label: str) -> None:
    """Raise for any status that is not a success: transient ones to be retried, the rest at once."""
    status = exchange.status
    if 200 <= status < 300:
        return
    fallback = exchange.reason or "no message"
    message = server_message(exchange.raw, fallback)
    if 300 <= status < 400 and "location" in exchange.headers:
        message = f"redirected to {redact_url(exchange.headers['location'])}; use that URL"
    retryable = status in _RETRY_STATUSES or status >= 500
    error = StatusError(
        f"{label}: HTTP {status}: {message}", status=status, server_message=message, retryable=retryable
    )
    error.retryable = retryable and not error.blames_answer
    if error.retryable:
        raise _TransientError(error, retry_after_seconds(exchange.headers.get("retry-after")))
    raise error


def _decode(exchange: _Exchange, label: str) -> Any:
    """The body as JSON (UTF-8, invalid bytes replaced), or a RequestError saying why it is not."""
    text = exchange.raw.decode("utf-8-sig", errors="replace")
    if not text.strip():
        raise RequestError(f"{label}: the response body is empty, not JSON", status=exchange.status)
    try:
        return scrub(json.loads(text))
    except (ValueError, RecursionError):
        preview = one_line(text, 60)
        raise RequestError(
            f"{label}: the response is not JSON (it starts {preview!r})", status=exchange.status
        ) from None
