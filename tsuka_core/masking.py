"""Secrets kept out of everything tsuka stores or shows: what looks like one, and masking it in text and JSON.

A run knows its secrets (an API key from any source, the credentials of a URL,
the Authorization value made of them, key-like option values); a server may
echo any of them inside an error or an answer, in any encoding
(``tsuka_core.secret_search``: case, percent and JSON escapes, base64, reversed,
or two thirds of it). :func:`mask_text` and :func:`mask_json` replace each with
``***`` (secrets shorter than :data:`MIN_SECRET_CHARS` are left alone: masking
every ``a`` would hide the text, not a secret). :func:`looks_like_key` and
:func:`secret_name` say which values and names hold one whatever they are called.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from tsuka_core.secret_search import MIN_SECRET_CHARS, SecretFinder, finder

__all__ = [
    "KEY_PATTERNS",
    "KEY_PREFIXES",
    "MASK",
    "MIN_SECRET_CHARS",
    "holds_secret",
    "looks_like_key",
    "mask_json",
    "mask_text",
    "masked_options",
    "secret_option",
]

MASK = "***"
"""What a secret is replaced with."""

KEY_PREFIXES = (
    "sk-", "sk_", "rk_live_", "gsk_", "AIza", "ya29.", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
    "glpat-", "gldt-", "hf_", "xapp-", "AKIA", "ASIA", "npm_", "pypi-", "r8_", "dop_v1_", "shpat_",
)  # fmt: skip
"""Value prefixes of common API keys and tokens (OpenAI, Groq, Google, GitHub, GitLab, Hugging Face, AWS...)."""
KEY_PATTERNS = re.compile(r"^(xox[a-z]-|xoxe\.|(bearer|basic)\s+\S|eyJ[\w-]+\.[\w-]+\.)", re.IGNORECASE)
"""Slack tokens, an HTTP ``Authorization`` value, a JSON Web Token."""

_SECRET_OPTION = re.compile(
    r"(^|[_-])(key|apikey|token|secret|password|passwd|pass|pwd|auth\w*|bearer|credentials?|cookie|signature)$",
    re.IGNORECASE,
)
_URL_PIECES = re.compile(r"[/?&=#@:;,]")


def looks_like_key(value: str) -> bool:
    """True when ``value`` (or a piece of a URL in it) starts like a common API key, token or Authorization value."""
    text = value.strip().strip("'\"")
    return any(part.startswith(KEY_PREFIXES) or KEY_PATTERNS.match(part) for part in (text, *_URL_PIECES.split(text)))


def secret_option(name: str, value: object) -> bool:
    """True when an option ``name=value`` holds a secret: by its name (``token``, ``api-key``...) or its value."""
    if not value:
        return False
    return bool(_SECRET_OPTION.search(name)) or (isinstance(value, str) and looks_like_key(value))


def masked_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with the value of every secret option (:func:`secret_option`) replaced by ``***``."""
    return {k: MASK if secret_option(str(k), v) else v for k, v in options.items()}


def holds_secret(text: str, secrets: Iterable[str | None]) -> bool:
    """Whether ``text`` holds any of ``secrets`` in any form a server can echo it (``secret_search``)."""
    return finder(secrets).found(text)


def mask_text(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret, in any form a server can echo it (``secret_search``), replaced by ``***``."""
    return finder(secrets).mask(text, MASK)


def mask_json(value: Any, secrets: Iterable[str | None]) -> Any:
    """A JSON value with every secret masked in its strings and keys; the same object when none holds one.

    The search walks without recursion; a value holding a secret too deep to rebuild is replaced whole.
    """
    found = finder(secrets)
    if not found or not _holds(value, found):
        return value
    try:
        return _rebuilt(value, found)
    except RecursionError:
        return MASK


def _holds(value: Any, found: SecretFinder) -> bool:
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if found.found(item):
                return True
        elif isinstance(item, Mapping):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
    return False


def _rebuilt(value: Any, found: SecretFinder) -> Any:
    if isinstance(value, str):
        return found.mask(value, MASK)
    if isinstance(value, Mapping):
        return {_rebuilt(k, found): _rebuilt(v, found) for k, v in value.items()}
    if isinstance(value, list | tuple):
        masked = [_rebuilt(item, found) for item in value]
        return tuple(masked) if isinstance(value, tuple) else masked
    return value
