"""How backends exchange JSON with a server over HTTP: bounded reads, retries with jittered backoff, redacted URLs.

Any backend that speaks HTTP, built in or from a plugin, can use :func:`request_json`
through the ``httpx.AsyncClient`` the engine gives it:

- connection errors, timeouts, 408, 429 and 5xx are tried again, at most
  ``retries`` times, after an exponential backoff with full jitter, or after
  the server's ``Retry-After`` (seconds or an HTTP date, capped at
  :data:`RETRY_AFTER_CAP`) when it sends one;
- any other status of 300 or more fails at once with :class:`StatusError`,
  carrying the server's own message on one line;
- a body that is not JSON, or larger than :data:`MAX_BODY_BYTES` once decoded,
  fails with a :class:`~tsuka_core.RequestError` saying so; the size is counted
  while the body is decoded, so a small compressed body that expands to
  gigabytes stops at the limit; a body in more than one content encoding, or
  in one other than gzip or deflate (:data:`ACCEPT_ENCODING`, which every
  request asks for), is refused unread; invalid UTF-8 is decoded with
  replacement characters.

Every message names the request by its redacted URL, and any ``secrets`` given
(an API key, the credentials of :func:`url_secrets`) are masked in it. httpx's
own log lines (``HTTP Request: POST <url>``, logger ``httpx``) show the URL
redacted too, for whoever turns logging on.
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
from tsuka_core.backends.tls import certificate_refused
from tsuka_core.errors import RequestError
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
_MESSAGE_CHARS = 300
_MIN_SECRET_CHARS = 4
_RETRY_STATUSES = frozenset({408, 429})
_TAG = re.compile(r"<[^>]*>")
_ACCEPT = {"Accept-Encoding": ACCEPT_ENCODING}

Sleep = Callable[[float], Awaitable[None]]


class StatusError(RequestError):
    """The server answered with an error status; ``server_message`` is what it said, on one line."""

    def __init__(self, message: str, *, status: int, server_message: str, retryable: bool = False) -> None:
        super().__init__(message, status=status, retryable=retryable)
        self.server_message = server_message


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


@dataclass(frozen=True)
class _Exchange:
    status: int
    reason: str
    headers: httpx.Headers
    raw: bytes
    duration: float


class _TransientError(Exception):
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


def server_message(raw: bytes, fallback: str = "") -> str:
    """The error message in a response body, on one shortened line; ``fallback`` when the body says nothing.

    Reads OpenAI-style ``{"error": {"message": ...}}``, ``{"error": "..."}``,
    ``{"message": ...}`` and FastAPI ``{"detail": ...}`` bodies; anything else is
    taken as text (HTML tags removed).
    """
    text = raw.decode("utf-8-sig", errors="replace")
    try:
        message = _json_message(scrub(json.loads(text)))
    except (ValueError, RecursionError):
        message = None
    if message is None:
        message = _TAG.sub(" ", text) if text.lstrip().startswith("<") else text
    return _one_line(message) or fallback


def _json_message(data: Any) -> str | None:
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    for value in (error, data.get("message"), data.get("detail")):
        if isinstance(value, str):
            return value
    detail = data.get("detail")
    if isinstance(detail, list):
        return "; ".join(_detail_item(item) for item in detail)
    return None


def _detail_item(item: Any) -> str:
    if not isinstance(item, dict):
        return str(item)
    loc = item.get("loc")
    where = ".".join(str(part) for part in loc) if isinstance(loc, list) else ""
    msg = str(item.get("msg", ""))
    return f"{where}: {msg}" if where else msg


def _one_line(text: str, limit: int = _MESSAGE_CHARS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _mask(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every secret (and its white-space-stripped form) replaced by ``***``.

    Forms shorter than :data:`_MIN_SECRET_CHARS` are left alone: masking every ``a``
    of a message would hide the message, not a secret.
    """
    for secret in secrets:
        for form in dict.fromkeys((secret, secret.strip())):
            if len(form) >= _MIN_SECRET_CHARS:
                text = text.replace(form, "***")
    return text


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
) -> JsonReply:
    """Send one request (``body`` as JSON, if given) and return the JSON answer, retrying transient failures.

    ``timeout`` bounds each attempt as a whole (and each network operation);
    ``None`` leaves the client's own timeouts. ``backoff_base`` and ``max_bytes``
    default to :data:`BACKOFF_BASE` and :data:`MAX_BODY_BYTES`; ``sleep`` replaces
    ``asyncio.sleep`` between attempts. Raises :class:`StatusError` for an error
    status and :class:`~tsuka_core.RequestError` for anything else that fails
    for good; ``retryable`` on the error says whether the last failure was a
    transient one.
    """
    limit = MAX_BODY_BYTES if max_bytes is None else max_bytes
    call = _Call(method, url, body, _with_encodings(headers), timeout, limit, _label(method, url))
    attempts = max(retries, 0) + 1
    base = BACKOFF_BASE if backoff_base is None else backoff_base
    import asyncio

    pause = sleep or asyncio.sleep
    for attempt in range(attempts):
        try:
            exchange = await _exchange(client, call)
            data = _decode(exchange, call.label)
            return JsonReply(data, exchange.status, exchange.duration, attempt + 1, len(exchange.raw))
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
    error.args = (_mask(str(error), secrets) + suffix,)
    if isinstance(error, StatusError):
        error.server_message = _mask(error.server_message, secrets)
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
            raw = await read_bounded(response, limit, truncate=failed, label=call.label)
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
    """``url`` parsed once for all the requests sent to it.

    A URL httpx cannot parse is returned as it is, so that sending it fails as before, with httpx's error.
    """
    import httpx

    try:
        return httpx.URL(url)
    except Exception:
        return url


def _transport_reason(exc: Exception) -> str:
    import httpx

    kind = type(exc).__name__
    detail = _one_line(str(exc))
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
    if retryable:
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
        preview = _one_line(text, 60)
        raise RequestError(
            f"{label}: the response is not JSON (it starts {preview!r})", status=exchange.status
        ) from None
