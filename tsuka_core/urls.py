"""URLs without their secrets: what is shown of a URL, and the secret parts to mask wherever a server echoes them."""

from __future__ import annotations

import base64
import re
from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = ["joined_url", "props_url", "redact_url", "url_parts", "url_secrets", "usable_url"]


def redact_url(url: str) -> str:
    """The URL without credentials: no ``user:password@``, every query value ``***`` (names kept), no fragment.

    A password is found even when it holds ``/``, ``?``, ``#`` or ``@`` unescaped
    (everything before the last ``@`` that is followed by a host is taken as
    credentials), so a URL typed that way is never shown whole.
    """
    scheme, rest = _split_scheme(url)
    rest = _split_userinfo(rest)[1]
    try:
        parts = urlsplit(f"{scheme}//{rest}" if scheme else rest)
    except ValueError:
        return f"{scheme}//{_HOST_END.split(rest, maxsplit=1)[0]}" if scheme else "***"
    query = "&".join(f"{p.partition('=')[0]}=***" if "=" in p else p for p in parts.query.split("&") if p)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def url_secrets(url: str) -> list[str]:
    """What :func:`redact_url` hides in ``url``: the password (the user name when it stands alone, a token given
    that way), the Basic token made of them, every query value.

    Each as written and percent-decoded, for masking them wherever a server echoes them back.
    """
    userinfo, rest = _split_userinfo(_split_scheme(url)[1])
    found: list[str] = []
    if userinfo is not None:
        user, colon, password = userinfo.partition(":")
        found.append(password if colon else user)
        # httpx sends user info as Basic auth, a user name alone as "user:" (a token given as the user name).
        pair = f"{unquote(user)}:{unquote(password)}"
        found.append(base64.b64encode(pair.encode("utf-8")).decode("ascii"))
    query = rest.partition("#")[0].partition("?")[2]
    found.extend(pair.partition("=")[2] for pair in query.split("&"))
    return [s for secret in found if secret for s in dict.fromkeys((secret, unquote(secret)))]


def url_parts(url: str) -> tuple[str | None, list[str]]:
    """``url``'s userinfo (``user:password``, None without one) and the names of its query parameters."""
    userinfo, rest = _split_userinfo(_split_scheme(url)[1])
    query = rest.partition("#")[0].partition("?")[2]
    return userinfo, [unquote(pair.partition("=")[0]) for pair in query.split("&") if pair]


_HOST_END = re.compile(r"[/?#]")
_PASSWORD_FIRST = re.compile(r"[^:/?#]*:(?!\d*/)")
_HOST_AFTER_AT = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.\-_~%]*)(:\d*)?([/?#]|$)")


def _split_scheme(url: str) -> tuple[str, str]:
    """``("https:", "user@host/...")``; ``("", url)`` when there is no ``scheme://``."""
    scheme, sep, rest = url.partition("//")
    if sep and re.fullmatch(r"[A-Za-z][A-Za-z0-9+.\-]*:", scheme):
        return scheme, rest
    return "", url


def _split_userinfo(rest: str) -> tuple[str | None, str]:
    """``(userinfo, host and the rest)``: the userinfo ends at the last ``@`` that a host follows.

    Text with ``/``, ``?`` or ``#`` before that ``@`` is userinfo only when it
    starts ``user:password`` (not ``host:port/``): an ``@`` in a path or a query
    of a URL without credentials is left where it is.
    """
    at = rest.rfind("@")
    while at >= 0:
        before = rest[:at]
        if _HOST_AFTER_AT.match(rest, at + 1) and (not _HOST_END.search(before) or _PASSWORD_FIRST.match(before)):
            return before, rest[at + 1 :]
        at = rest.rfind("@", 0, at)
    return None, rest


def usable_url(url: str) -> bool:
    """True for an http(s) URL with a host and, if any, a port in range: what a server's base URL must be."""
    try:
        parts = urlsplit(url)
        _port = parts.port  # raises ValueError when out of range or not a number
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def props_url(base_url: str) -> str:
    """llama.cpp's ``/props`` at the server root: ``/v1`` taken off the base URL's path, its query string kept."""
    parts = urlsplit(base_url)
    root = parts.path.rstrip("/").removesuffix("/v1")
    return urlunsplit(parts._replace(path=f"{root}/props"))


def joined_url(base_url: str, path: str) -> str:
    """``base_url`` with ``/path`` appended to its path, its query string kept."""
    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(path=f"{parts.path.rstrip('/')}/{path}"))
