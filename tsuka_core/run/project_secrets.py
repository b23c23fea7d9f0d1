"""Finding secrets written into the project file: secret-named keys, key-like values, URLs carrying credentials."""

from __future__ import annotations

import re
from typing import Any

from tsuka_core.urls import url_parts

__all__ = ["secret_problems"]

Loc = tuple[str | int, ...]

SECRET_NAME = re.compile(
    r"(^|_)(api_?key|key|keys|token|secret|password|passwd|pass|pwd|auth|authorization|authentication|bearer"
    r"|credentials?|cookie|session_?id|private_?key|sig|signature)$"
)
"""A key (or query parameter) name, normalised by :func:`normal_name`, whose value would be a secret."""
KEY_PREFIXES = (
    "sk-", "sk_", "rk_live_", "gsk_", "AIza", "ya29.", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
    "glpat-", "gldt-", "hf_", "xapp-", "AKIA", "ASIA", "npm_", "pypi-", "r8_", "dop_v1_", "shpat_",
)  # fmt: skip
"""Value prefixes of common API keys and tokens (OpenAI, Groq, Google, GitHub, GitLab, Hugging Face, AWS...)."""
KEY_PATTERNS = re.compile(r"^(xox[a-z]-|xoxe\.|(bearer|basic)\s+\S|eyJ[\w-]+\.[\w-]+\.)", re.IGNORECASE)
"""Slack tokens, an HTTP ``Authorization`` value, a JSON Web Token."""

_URL_PIECES = re.compile(r"[/?&=#@:;,]")

NAMED = "secrets never live in the project file: name the variable holding it in api_key_env"
LOOKS = "this looks like an API key; keep it in an environment variable named by api_key_env"
QUERY = "remove it and name the key's variable in api_key_env"
USERINFO = "the URL holds credentials (user:password@); remove them and name the key's variable in api_key_env"


def normal_name(key: str) -> str:
    """``X-Api-Key``, ``x_api_key`` and ``xApiKey`` all as ``x_api_key``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key.strip())
    return re.sub(r"[\s_\-.]+", "_", spaced).lower()


def secret_name(key: str) -> bool:
    """True when a key (or a query parameter) named ``key`` would hold a secret."""
    return bool(SECRET_NAME.search(normal_name(key)))


def secret_problems(value: Any, loc: Loc = ()) -> list[tuple[Loc, str]]:
    """Every secret literal in the table ``value``: its location and what to do instead (never the secret)."""
    found: list[tuple[Loc, str]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if secret_name(str(key)):
                found.append(((*loc, key), NAMED))
            else:
                found += secret_problems(item, (*loc, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += secret_problems(item, (*loc, index))
    elif isinstance(value, str):
        found += [(loc, message) for message in _text_problems(value)]
    return found


def _text_problems(value: str) -> list[str]:
    text = value.strip().strip("'\"")
    if any(part.startswith(KEY_PREFIXES) or KEY_PATTERNS.match(part) for part in (text, *_URL_PIECES.split(text))):
        return [LOOKS]
    if "://" not in text:
        return []
    userinfo, names = url_parts(text)
    problems = [USERINFO] if userinfo is not None else []
    secret = [name for name in names if secret_name(name)]
    if secret:
        shown = ", ".join(repr(name[:40]) for name in secret)
        problems.append(f"the URL's query holds a secret ({shown}); {QUERY}")
    return problems
