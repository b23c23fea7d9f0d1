"""Finding a secret in text a server sent back, in any form it can take there.

A server can echo a secret as given, in another case, percent-encoded,
JSON-escaped (``\\u0073``), as an HTML character reference, reversed, in base64
(alone or inside a longer base64 blob, such as a Basic token), or in part (an
error that quotes the first two thirds of a key). :class:`SecretFinder` decodes
the escapes of a text once, compares without case, and finds every run of at
least two thirds of any form of any secret (a form of eight characters or fewer
only whole), so the text can be masked where it stands.
"""

from __future__ import annotations

import base64
import bisect
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["MIN_SECRET_CHARS", "PART_SHARE", "WHOLE_ONLY_CHARS", "SecretFinder", "encoded_forms", "finder"]

MIN_SECRET_CHARS = 4
"""Secrets shorter than this are not sought: masking every ``a`` would hide the text, not a secret."""
PART_SHARE = 2 / 3
"""The shortest part of a form that is masked, as a share of the form's length."""
WHOLE_ONLY_CHARS = 8
"""A form of at most this many characters is masked only whole; a longer one from a run of
``max(WHOLE_ONLY_CHARS, ceil(PART_SHARE * length))`` characters on."""
_CORES = 8
"""At most this many fixed pieces of a form are searched for; a part of the form always holds one whole."""

_ESCAPE = re.compile(
    r"\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}|(?:%[0-9a-fA-F]{2})+|\\[\\/\"'`]"
    r"|&#[0-9]{1,7};|&#[xX][0-9a-fA-F]{1,6};|&(?:amp|lt|gt|quot|apos);"
)
_ENTITIES = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&apos;": "'"}
_MARKS = ("\\", "%", "&")


def encoded_forms(secret: str) -> list[str]:
    """``secret`` as given, stripped, reversed, and in base64 (standard and URL-safe, at each byte alignment)."""
    forms = [secret, secret.strip(), secret[::-1]]
    raw = secret.encode("utf-8", "surrogatepass")
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(raw).decode("ascii")
        forms += [whole, whole.rstrip("=")]
        for pad in (1, 2):  # the secret at another offset inside a longer encoded value
            shifted = encode(b"\0" * pad + raw).decode("ascii")
            forms.append(shifted[math.ceil(pad * 8 / 6) : (pad + len(raw)) * 8 // 6])
    return forms


@dataclass(frozen=True)
class _Form:
    text: str
    """The form, lower-cased."""
    cores: tuple[tuple[int, str], ...]
    """Fixed pieces (offset, text): every run of the form at least ``part`` long holds one of them whole."""


def _form(text: str) -> _Form:
    n = len(text)
    part = n if n <= WHOLE_ONLY_CHARS else max(WHOLE_ONLY_CHARS, math.ceil(PART_SHARE * n))
    step = max(1, math.ceil((n - part + 1) / _CORES))
    size = part - step + 1
    return _Form(text, tuple((q, text[q : q + size]) for q in range(0, n - size + 1, step)))


class SecretFinder:
    """Every form of some secrets, found and masked in text: one instance per set of secrets (see :func:`finder`)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        texts = {_lower(f) for s in secrets if len(s.strip()) >= MIN_SECRET_CHARS for f in encoded_forms(s)}
        self._forms = tuple(_form(t) for t in sorted(texts, key=len, reverse=True) if len(t) >= MIN_SECRET_CHARS)

    def __bool__(self) -> bool:
        return bool(self._forms)

    def found(self, text: str) -> bool:
        """Whether ``text`` holds any form of a secret."""
        return bool(self._forms) and bool(self._spans(_decoded(text)))

    def mask(self, text: str, mask: str) -> str:
        """``text`` with every form of a secret found in it replaced by ``mask``; the same string when none is."""
        if not self._forms:
            return text
        spans = self._spans(_decoded(text))
        if not spans:
            return text
        pieces = _pieces(text)
        out, at = [], 0
        for start, end in spans:
            begin, stop = pieces.original(start, end)
            out += [text[at:begin], mask]
            at = max(at, stop)
        out.append(text[at:])
        return "".join(out)

    def _spans(self, view: str) -> list[tuple[int, int]]:
        """Where in the decoded, lower-cased ``view`` a form's part stands: merged, in order."""
        found: list[tuple[int, int]] = []
        for form in self._forms:
            for offset, core in form.cores:
                at = view.find(core)
                while at >= 0:
                    span = _widened(view, form.text, at, offset, len(core))
                    found.append(span)
                    at = view.find(core, max(at + 1, span[1] - len(core) + 1))
        merged: list[tuple[int, int]] = []
        for start, end in sorted(found):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        return merged


def _widened(view: str, form: str, at: int, offset: int, size: int) -> tuple[int, int]:
    """The span of ``view`` around a core found at ``at`` that still reads as ``form``."""
    start, left = at, offset
    while left > 0 and start > 0 and view[start - 1] == form[left - 1]:
        start, left = start - 1, left - 1
    end, right = at + size, offset + size
    while right < len(form) and end < len(view) and view[end] == form[right]:
        end, right = end + 1, right + 1
    return start, end


class _Pieces:
    """Where each stretch of a decoded text came from in the original."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        """Each piece's start in the decoded text."""
        self.spans: list[tuple[int, int, bool]] = []
        """Each piece's start and end in the original, and whether it is literal text (one character each)."""

    def add(self, decoded_at: int, start: int, end: int, literal: bool) -> None:
        self.starts.append(decoded_at)
        self.spans.append((start, end, literal))

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The original span of the decoded span ``[start, end)``, widened to whole escapes."""
        return self._at(start, first=True), self._at(end - 1, first=False)

    def _at(self, index: int, *, first: bool) -> int:
        piece = bisect.bisect_right(self.starts, index) - 1
        begin, stop, literal = self.spans[piece]
        if literal:
            return begin + index - self.starts[piece] + (0 if first else 1)
        return begin if first else stop


def _decoded(text: str) -> str:
    """``text`` with its escapes decoded, lower-cased."""
    if not any(mark in text for mark in _MARKS):
        return _lower(text)
    return _lower(_ESCAPE.sub(_decode, text))


@lru_cache(maxsize=4096)
def _decoded_token(token: str) -> str:
    return "".join(char for _start, _end, char in _units(token, 0))


def _decode(match: re.Match[str]) -> str:
    return _decoded_token(match.group())


def _pieces(text: str) -> _Pieces:
    """Where each piece of ``text`` decoded (:func:`_decoded`) came from: made only when a secret was found."""
    pieces = _Pieces()
    size = at = 0
    for match in _ESCAPE.finditer(text) if any(mark in text for mark in _MARKS) else ():
        if match.start() > at:
            pieces.add(size, at, match.start(), True)
            size += match.start() - at
        for start, end, char in _units(match.group(), match.start()):
            pieces.add(size, start, end, False)
            size += len(char)
        at = match.end()
    pieces.add(size, at, len(text), True)
    return pieces


def _units(token: str, start: int) -> Sequence[tuple[int, int, str]]:
    """Each escape of ``token`` (found at ``start``) with its span and what it decodes to (percent runs as UTF-8)."""
    end = start + len(token)
    if token.startswith("%"):
        data = bytes(int(token[i + 1 : i + 3], 16) for i in range(0, len(token), 3))
        if data.isascii():
            return [(start + i * 3, start + i * 3 + 3, chr(b)) for i, b in enumerate(data)]
        return [(start, end, data.decode("utf-8", "replace"))]
    if token.startswith(("\\u", "\\x")):
        return [(start, end, chr(int(token[2:], 16)))]
    if token.startswith("&#"):
        number = int(token[3:-1], 16) if token[2] in "xX" else int(token[2:-1])
        return [(start, end, chr(number) if number < 0x110000 else "\ufffd")]
    if token.startswith("&"):
        return [(start, end, _ENTITIES[token])]
    return [(start, end, token[1])]


def _lower(text: str) -> str:
    """``text`` lower-cased character for character (a character whose lower case is longer is kept)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(low := c.lower()) != 1 else low for c in text)


@lru_cache(maxsize=64)
def _cached(secrets: tuple[str, ...]) -> SecretFinder:
    return SecretFinder(secrets)


def finder(secrets: Iterable[str | None]) -> SecretFinder:
    """The finder of ``secrets`` (None and empty ones ignored), made once per set of secrets."""
    return _cached(tuple(sorted({s for s in secrets if s})))
