"""Small helpers used by several layers: timestamps as stored, and URLs without their secrets."""

from __future__ import annotations

import base64
import re
from datetime import UTC, datetime
from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = ["format_tested_at", "redact_url", "url_secrets"]

_SECRET_PARAMS = frozenset({"key", "api_key", "apikey", "api-key", "token", "access_token"})


def format_tested_at(moment: datetime) -> str:
    """ISO-8601 in UTC with milliseconds and ``Z`` (``2026-12-02T10:31:05.123Z``); naive times are local."""
    utc = moment.astimezone(UTC)
    return f"{utc:%Y-%m-%dT%H:%M:%S}.{utc.microsecond // 1000:03d}Z"


def redact_url(url: str) -> str:
    """The URL without credentials: no ``user:password@``, no ``key``/``api_key``/``token`` query parameters."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return re.sub(r"//[^/@]*@", "//", url)
    netloc = parts.netloc.rpartition("@")[2]
    kept = [p for p in parts.query.split("&") if p and unquote(p.split("=")[0]).lower() not in _SECRET_PARAMS]
    return urlunsplit((parts.scheme, netloc, parts.path, "&".join(kept), parts.fragment))


def url_secrets(url: str) -> list[str]:
    """What :func:`redact_url` hides in ``url``: the password, the Basic token made of it, secret query values.

    Each as written and percent-decoded, for masking them wherever a server echoes them back.
    """
    try:
        parts = urlsplit(url)
        found = [parts.password or ""]
    except ValueError:
        return []
    if parts.password is not None:
        pair = f"{unquote(parts.username or '')}:{unquote(parts.password)}"
        found.append(base64.b64encode(pair.encode("utf-8")).decode("ascii"))
    for pair in parts.query.split("&"):
        name, _, value = pair.partition("=")
        if unquote(name).lower() in _SECRET_PARAMS:
            found.append(value)
    return [s for secret in found if secret for s in dict.fromkeys((secret, unquote(secret)))]
