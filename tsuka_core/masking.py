"""Secrets kept out of everything tsuka stores or shows: what looks like one, and masking it in text and JSON.

A run knows its secrets (an API key from any source, the credentials of a URL,
the Authorization value made of them, key-like option values); a server may
echo any of them inside an error or an answer. :func:`mask_text` and
:func:`mask_json` replace each with ``***`` (forms shorter than
:data:`MIN_SECRET_CHARS` are left alone: masking every ``a`` would hide the
text, not a secret). :func:`looks_like_key` and :func:`secret_name` say which
values and names hold one whatever they are called.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "KEY_PATTERNS",
    "KEY_PREFIXES",
    "MASK",
    "MIN_SECRET_CHARS",
    "looks_like_key",
    "mask_json",
    "mask_text",
    "masked_options",
    "secret_forms",
    "secret_option",
]

MASK = "***"
"""What a secret is replaced with."""
MIN_SECRET_CHARS = 4
"""Forms shorter than this are not masked."""

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


def secret_forms(secrets: Iterable[str | None]) -> tuple[str, ...]:
    """The forms of ``secrets`` to mask: each as given and stripped, long enough, longest first, no repeats."""
    forms = {form for secret in secrets if secret for form in (secret, secret.strip()) if len(form) >= MIN_SECRET_CHARS}
    return tuple(sorted(forms, key=len, reverse=True))


def mask_text(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret (and its white-space-stripped form) replaced by ``***``."""
    for form in secret_forms(secrets):
        if form in text:
            text = text.replace(form, MASK)
    return text


def mask_json(value: Any, secrets: Iterable[str | None]) -> Any:
    """A JSON value with every secret masked in its strings and keys; the same object when none holds one.

    The search walks without recursion; a value holding a secret too deep to rebuild is replaced whole.
    """
    forms = secret_forms(secrets)
    if not forms or not _holds(value, forms):
        return value
    try:
        return _rebuilt(value, forms)
    except RecursionError:
        return MASK


def _holds(value: Any, forms: tuple[str, ...]) -> bool:
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if any(form in item for form in forms):
                return True
        elif isinstance(item, Mapping):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
    return False


def _rebuilt(value: Any, forms: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return mask_text(value, forms)
    if isinstance(value, Mapping):
        return {_rebuilt(k, forms): _rebuilt(v, forms) for k, v in value.items()}
    if isinstance(value, list | tuple):
        masked = [_rebuilt(item, forms) for item in value]
        return tuple(masked) if isinstance(value, tuple) else masked
    return value
